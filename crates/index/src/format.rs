//! The binary files of the index, read by seeking to the few bytes an answer needs.
//!
//! All integers are little-endian.
//!
//! ```text
//! grams.bin   "DHG1" | build_id u64 | keys u32 | blocks u32
//!             | first key of each block: blocks x u32
//!             | entries: keys x (key u32, offset u64, len u32), sorted by key
//! pages.bin   "DHP7" | build_id u64 | pages u32 | 0 u32
//!             | starts: (pages + 1) x u64, where each page's entry starts in the data (the
//!               last is the data's length), so an entry is found in one small read
//!             | data: each page's entry, back to back: sub u32, id_len u32, title_len u32,
//!               raw_size u32, raw_packed_len u32, plain_size u32, summary_size u32,
//!               headings_size u32, text_packed_len u32, raw_hash u64, text_hash u64, then
//!               the id and title (UTF-8), the whole file compressed as one LZ4 block, and
//!               the body's plain text, the summary and the headings as another, compressed
//!               with the file as its dictionary (a candidate that is not a hit unpacks only
//!               the first); the hashes are of the compressed blocks
//! headings    each heading of the body in page order: text_start u32, text_end u32 (where
//!             its text is in the plain text), id_len u32, then its rendered `id` (UTF-8)
//! terms.bin   "DHT1" | build_id u64 | terms u32 | blocks u32 | index_len u32
//!             | block index: blocks x (first_len u8, first term, offset u32, len u32)
//!             | blocks: entries (term_len u8, term, df u32, offset u64, len u32), sorted
//!               by term, 128 a block; offsets count from the end of the block index
//! impacts.bin each term's pages: count varint, then (page delta varint, impact u16)
//! postings    tag 0: count varint, then page numbers as varint deltas
//!             tag 1: a bitmap of one bit per page
//! ```
//!
//! A key is a byte trigram, `(3 << 24) | b0 << 16 | b1 << 8 | b2`, an ASCII bigram
//! `(2 << 24) | b0 << 8 | b1`, a word boundary `(1 << 28) | 28 bits of its hash`, or an
//! inner word `(1 << 29) | its hash modulo 16384`, so all live in one sorted table.

use std::path::{Path, PathBuf};

use crate::IndexError;
use dochub_content::fsio::File;
use dochub_search::Heading;

const GRAMS_MAGIC: &[u8; 4] = b"DHG1";
const PAGES_MAGIC: &[u8; 4] = b"DHP7";
const TERMS_MAGIC: &[u8; 4] = b"DHT1";
const TERMS_HEADER: usize = 24;
/// Entries per block of the term table.
const TERMS_BLOCK: usize = 128;
const GRAMS_HEADER: usize = 20;
const PAGES_HEADER: usize = 20;
/// Entries per block of the key table: one block (4 KiB) is read per key looked up.
const BLOCK: usize = 256;
const ENTRY: usize = 16;
/// The fixed fields that open a page's entry: nine `u32` and two hashes.
const PAGE_HEAD: usize = 52;
/// Bytes of the key table's block index read with its header: 4 bytes a block of 256 keys.
const HEAD_GUESS: usize = 16 * 1024;

/// The key of a byte trigram.
pub(super) fn trigram(a: u8, b: u8, c: u8) -> u32 {
    (3 << 24) | (u32::from(a) << 16) | (u32::from(b) << 8) | u32::from(c)
}

/// The key of a word boundary, from its hash (a hash that collides only widens the
/// candidates, which are all matched after).
pub(super) fn boundary(hash: u64) -> u32 {
    (1 << 28) | (hash as u32 & 0x0fff_ffff)
}

/// How many keys inner words share ([`inner`]).
pub(super) const INNER_BUCKETS: u32 = 16384;

/// The key of a word between two word boundaries, from its hash: one of
/// [`INNER_BUCKETS`].
pub(super) fn inner(hash: u64) -> u32 {
    (1 << 29) | (hash % u64::from(INNER_BUCKETS)) as u32
}

/// The key of a byte bigram.
pub(super) fn bigram(a: u8, b: u8) -> u32 {
    (2 << 24) | (u32::from(a) << 8) | u32::from(b)
}

pub(super) fn open(path: &Path) -> Result<File, IndexError> {
    File::open(path).map_err(|e| IndexError::io(path, e))
}

/// Reads byte ranges of an index file together (see [`dochub_content::fsio`]); a range that comes back
/// short means the file is not what its header says.
pub(super) fn read_ranges(
    file: &mut File,
    path: &Path,
    ranges: &[(u64, usize)],
) -> Result<Vec<Vec<u8>>, IndexError> {
    let out = file
        .read_ranges(ranges)
        .map_err(|e| IndexError::io(path, e))?;
    if out
        .iter()
        .zip(ranges)
        .any(|(got, &(_, len))| got.len() != len)
    {
        return Err(damaged(path));
    }
    Ok(out)
}

/// Reads one byte range of an index file.
pub(super) fn read_at(
    file: &mut File,
    path: &Path,
    offset: u64,
    len: usize,
) -> Result<Vec<u8>, IndexError> {
    Ok(read_ranges(file, path, &[(offset, len)])?.remove(0))
}

pub(super) fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

pub(super) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

pub(super) fn damaged(path: &Path) -> IndexError {
    IndexError::Damaged {
        path: path.to_path_buf(),
    }
}

/// Builds `grams.bin` in memory; keys must be pushed in ascending order.
#[derive(Default)]
pub(super) struct GramsWriter {
    entries: Vec<u8>,
    firsts: Vec<u8>,
    count: usize,
}

impl GramsWriter {
    pub(super) fn push(&mut self, key: u32, offset: u64, len: u32) {
        if self.count.is_multiple_of(BLOCK) {
            self.firsts.extend_from_slice(&key.to_le_bytes());
        }
        self.entries.extend_from_slice(&key.to_le_bytes());
        self.entries.extend_from_slice(&offset.to_le_bytes());
        self.entries.extend_from_slice(&len.to_le_bytes());
        self.count += 1;
    }

    pub(super) fn finish(self, build_id: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(GRAMS_HEADER + self.firsts.len() + self.entries.len());
        out.extend_from_slice(GRAMS_MAGIC);
        out.extend_from_slice(&build_id.to_le_bytes());
        out.extend_from_slice(&(self.count as u32).to_le_bytes());
        out.extend_from_slice(&((self.firsts.len() / 4) as u32).to_le_bytes());
        out.extend_from_slice(&self.firsts);
        out.extend_from_slice(&self.entries);
        out
    }
}

/// The key table, opened: its header and block index read, entries read a block at a time.
pub(super) struct Grams {
    file: File,
    path: PathBuf,
    build_id: u64,
    keys: usize,
    firsts: Vec<u32>,
}

impl Grams {
    pub(super) fn open(path: &Path) -> Result<Grams, IndexError> {
        let mut file = open(path)?;
        // The header and, for up to a million keys, the block index in one read.
        let mut head = file
            .read_ranges(&[(0, GRAMS_HEADER + HEAD_GUESS)])
            .map_err(|e| IndexError::io(path, e))?
            .remove(0);
        if head.len() < GRAMS_HEADER || &head[..4] != GRAMS_MAGIC {
            return Err(damaged(path));
        }
        let build_id = u64_at(&head, 4);
        let keys = u32_at(&head, 12) as usize;
        let blocks = u32_at(&head, 16) as usize;
        if blocks != keys.div_ceil(BLOCK) {
            return Err(damaged(path));
        }
        let end = GRAMS_HEADER + blocks * 4;
        if head.len() < end {
            let have = head.len();
            head.extend(read_at(&mut file, path, have as u64, end - have)?);
        }
        let firsts = head[GRAMS_HEADER..end]
            .chunks_exact(4)
            .map(|c| u32_at(c, 0))
            .collect();
        Ok(Grams {
            file,
            path: path.to_path_buf(),
            build_id,
            keys,
            firsts,
        })
    }

    pub(super) fn build_id(&self) -> u64 {
        self.build_id
    }

    /// Offset and length of `key`'s posting list, if any page has the key.
    #[cfg(test)]
    pub(super) fn find(&mut self, key: u32) -> Result<Option<(u64, u32)>, IndexError> {
        Ok(self.find_all(&[key])?.remove(0))
    }

    /// Offset and length of each key's posting list (`None` where no page has the key), the
    /// blocks of all the keys read together.
    pub(super) fn find_all(&mut self, keys: &[u32]) -> Result<Vec<Option<(u64, u32)>>, IndexError> {
        // The last block whose first key is <= key.
        let block_of = |key: u32| match self.firsts.partition_point(|&first| first <= key) {
            0 => None,
            n => Some(n - 1),
        };
        let mut blocks: Vec<usize> = keys.iter().filter_map(|&k| block_of(k)).collect();
        blocks.sort_unstable();
        blocks.dedup();
        let table = GRAMS_HEADER + self.firsts.len() * 4;
        let ranges: Vec<(u64, usize)> = blocks
            .iter()
            .map(|&b| {
                let start = b * BLOCK;
                let count = BLOCK.min(self.keys - start);
                ((table + start * ENTRY) as u64, count * ENTRY)
            })
            .collect();
        let read = read_ranges(&mut self.file, &self.path, &ranges)?;
        Ok(keys
            .iter()
            .map(|&key| {
                let b = block_of(key)?;
                let bytes = &read[blocks.binary_search(&b).ok()?];
                let count = bytes.len() / ENTRY;
                let (mut lo, mut hi) = (0, count);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    let at = mid * ENTRY;
                    match u32_at(bytes, at).cmp(&key) {
                        std::cmp::Ordering::Less => lo = mid + 1,
                        std::cmp::Ordering::Greater => hi = mid,
                        std::cmp::Ordering::Equal => {
                            return Some((u64_at(bytes, at + 4), u32_at(bytes, at + 12)));
                        }
                    }
                }
                None
            })
            .collect())
    }
}

/// Builds `pages.bin` in memory, pages in number order.
#[derive(Default)]
pub(super) struct PagesWriter {
    starts: Vec<u64>,
    data: Vec<u8>,
}

impl PagesWriter {
    /// Adds the next page: its subproject's number, id, title, file, plain text, summary and
    /// headings.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push(
        &mut self,
        sub: u32,
        id: &str,
        title: &str,
        raw: &[u8],
        plain: &str,
        summary: &str,
        headings: &[Heading],
    ) -> Result<(), IndexError> {
        let too_big = || IndexError::PageTooLarge {
            page: id.to_owned(),
        };
        let len32 = |len: usize| u32::try_from(len).map_err(|_| too_big());
        let packed_raw = lz4_flex::block::compress(raw);
        let mut text = Vec::with_capacity(plain.len() + summary.len());
        text.extend_from_slice(plain.as_bytes());
        text.extend_from_slice(summary.as_bytes());
        for heading in headings {
            for n in [heading.text.start, heading.text.end, heading.id.len()] {
                text.extend_from_slice(&len32(n)?.to_le_bytes());
            }
            text.extend_from_slice(heading.id.as_bytes());
        }
        let headings_size = text.len() - plain.len() - summary.len();
        // The plain text is mostly the file's own words: packed against the file, it costs
        // little beside it (alone it would add a third to the table).
        let packed_text = lz4_flex::block::compress_with_dict(&text, raw);
        self.starts.push(self.data.len() as u64);
        let fields = [
            sub,
            len32(id.len())?,
            len32(title.len())?,
            len32(raw.len())?,
            len32(packed_raw.len())?,
            len32(plain.len())?,
            len32(summary.len())?,
            len32(headings_size)?,
            len32(packed_text.len())?,
        ];
        for field in fields {
            self.data.extend_from_slice(&field.to_le_bytes());
        }
        self.data
            .extend_from_slice(&crate::hash(&packed_raw).to_le_bytes());
        self.data
            .extend_from_slice(&crate::hash(&packed_text).to_le_bytes());
        self.data.extend_from_slice(id.as_bytes());
        self.data.extend_from_slice(title.as_bytes());
        self.data.extend_from_slice(&packed_raw);
        self.data.extend_from_slice(&packed_text);
        Ok(())
    }

    pub(super) fn finish(self, build_id: u64) -> Vec<u8> {
        entry_table(PAGES_MAGIC, build_id, &self.starts, &self.data)
    }
}

/// A file of one entry per page: `magic | build_id u64 | pages u32 | 0 u32 | starts
/// (pages + 1) x u64 | data`, each start where that page's entry begins in `data` (the last is
/// `data`'s length). `pages.bin` and `code.bin` are laid out so.
pub(super) fn entry_table(magic: &[u8; 4], build_id: u64, starts: &[u64], data: &[u8]) -> Vec<u8> {
    let count = starts.len();
    let mut out = Vec::with_capacity(PAGES_HEADER + (count + 1) * 8 + data.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&build_id.to_le_bytes());
    out.extend_from_slice(&(count as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    for start in starts.iter().chain([&(data.len() as u64)]) {
        out.extend_from_slice(&start.to_le_bytes());
    }
    out.extend_from_slice(data);
    out
}

/// A packed part of a page entry: LZ4 bytes, the hash they were written with, and the size
/// they unpack to.
#[derive(Debug)]
struct Packed {
    bytes: Vec<u8>,
    hash: u64,
    size: usize,
}

impl Packed {
    /// Unpacks; bytes that do not match their recorded hash, or do not unpack to the recorded
    /// size, are damage. The hash is checked first, so the decoder only ever sees what the
    /// build wrote.
    fn unpack(&self, path: &Path, dict: &[u8]) -> Result<Vec<u8>, IndexError> {
        // A byte of LZ4 stands for at most 255: a recorded size past that is damage, refused
        // before it is allocated (a component's memory is small).
        let most = self.bytes.len().saturating_mul(255).saturating_add(16);
        if crate::hash(&self.bytes) != self.hash || self.size > most {
            return Err(damaged(path));
        }
        lz4_flex::block::decompress_with_dict(&self.bytes, self.size, dict)
            .ok()
            .filter(|bytes| bytes.len() == self.size)
            .ok_or_else(|| damaged(path))
    }
}

/// One page as the page table holds it: what a search result needs, its file included.
#[derive(Debug)]
pub(super) struct PageRecord {
    /// Its number in path order.
    pub(super) number: u32,
    pub(super) sub: u32,
    pub(super) id: String,
    pub(super) title: String,
    /// The file as it was when the index was built: unpacked only to match it
    /// ([`PagesFile::raw`]).
    raw: Packed,
    /// The body's plain text, the summary and the headings: unpacked only for a hit
    /// ([`PagesFile::text`]).
    text: Packed,
    plain_size: usize,
    summary_size: usize,
}

/// The page table, opened: entries located through the table of starts, then read one each.
pub(super) struct PagesFile {
    file: File,
    path: PathBuf,
    build_id: u64,
    count: u32,
}

impl PagesFile {
    pub(super) fn open(path: &Path) -> Result<PagesFile, IndexError> {
        let mut file = open(path)?;
        let header = read_at(&mut file, path, 0, PAGES_HEADER)?;
        if &header[..4] != PAGES_MAGIC {
            return Err(damaged(path));
        }
        Ok(PagesFile {
            build_id: u64_at(&header, 4),
            count: u32_at(&header, 12),
            file,
            path: path.to_path_buf(),
        })
    }

    pub(super) fn build_id(&self) -> u64 {
        self.build_id
    }

    /// The pages `numbers`, in that order: where each entry starts and ends in one round
    /// (neighbouring starts are read as one span, see [`dochub_content::fsio::File`]), then
    /// each entry in one read in a second.
    pub(super) fn records(&mut self, numbers: &[u32]) -> Result<Vec<PageRecord>, IndexError> {
        if numbers.iter().any(|&n| n >= self.count) {
            return Err(damaged(&self.path));
        }
        let starts_at = |n: u32| PAGES_HEADER as u64 + u64::from(n) * 8;
        let ranges: Vec<(u64, usize)> = numbers.iter().map(|&n| (starts_at(n), 16)).collect();
        let base = starts_at(self.count + 1);
        let mut entries = Vec::with_capacity(numbers.len());
        for bounds in read_ranges(&mut self.file, &self.path, &ranges)? {
            let (start, end) = (u64_at(&bounds, 0), u64_at(&bounds, 8));
            let len = end
                .checked_sub(start)
                .and_then(|len| usize::try_from(len).ok())
                .filter(|&len| len >= PAGE_HEAD)
                .ok_or_else(|| damaged(&self.path))?;
            entries.push((base.saturating_add(start), len));
        }
        read_ranges(&mut self.file, &self.path, &entries)?
            .into_iter()
            .zip(numbers)
            .map(|(entry, &number)| {
                self.parse(number, &entry)
                    .ok_or_else(|| damaged(&self.path))
            })
            .collect()
    }

    /// One entry: its fixed fields, then id, title, packed file and packed text, which must
    /// fill it exactly.
    fn parse(&self, number: u32, entry: &[u8]) -> Option<PageRecord> {
        let field = |i: usize| u32_at(entry, i * 4) as usize;
        let [
            sub,
            id_len,
            title_len,
            raw_size,
            raw_len,
            plain_size,
            summary_size,
            headings_size,
            text_len,
        ] = std::array::from_fn(field);
        let (raw_hash, text_hash) = (u64_at(entry, 36), u64_at(entry, 44));
        let mut rest = &entry[PAGE_HEAD..];
        let mut take = |len: usize| {
            let (part, after) = rest.split_at_checked(len)?;
            rest = after;
            Some(part)
        };
        let id = String::from_utf8(take(id_len)?.to_vec()).ok()?;
        let title = String::from_utf8(take(title_len)?.to_vec()).ok()?;
        let raw = Packed {
            bytes: take(raw_len)?.to_vec(),
            hash: raw_hash,
            size: raw_size,
        };
        let text = Packed {
            bytes: take(text_len)?.to_vec(),
            hash: text_hash,
            size: plain_size
                .checked_add(summary_size)?
                .checked_add(headings_size)?,
        };
        rest.is_empty().then_some(PageRecord {
            number,
            sub: sub as u32,
            id,
            title,
            raw,
            text,
            plain_size,
            summary_size,
        })
    }

    /// A record's file, unpacked.
    pub(super) fn raw(&self, record: &PageRecord) -> Result<Vec<u8>, IndexError> {
        record.raw.unpack(&self.path, &[])
    }

    /// A record's body as plain text, its summary and its headings, unpacked against its
    /// file (`raw`).
    pub(super) fn text(&self, record: &PageRecord, raw: &[u8]) -> Result<PageText, IndexError> {
        let mut plain = record.text.unpack(&self.path, raw)?;
        let mut summary = plain.split_off(record.plain_size);
        let headings = summary.split_off(record.summary_size);
        let utf8 = |bytes: Vec<u8>| String::from_utf8(bytes).map_err(|_| damaged(&self.path));
        let plain = utf8(plain)?;
        let headings = parse_headings(&headings, &plain).ok_or_else(|| damaged(&self.path))?;
        Ok(PageText {
            plain,
            summary: utf8(summary)?,
            headings,
        })
    }
}

/// What a hit shows of a page, unpacked ([`PagesFile::text`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PageText {
    pub(super) plain: String,
    pub(super) summary: String,
    pub(super) headings: Vec<Heading>,
}

/// The headings of a page entry; each must lie in the plain text, on character boundaries,
/// in page order.
fn parse_headings(mut bytes: &[u8], plain: &str) -> Option<Vec<Heading>> {
    let mut headings: Vec<Heading> = Vec::new();
    while !bytes.is_empty() {
        let (head, rest) = bytes.split_at_checked(12)?;
        let [start, end, id_len] = std::array::from_fn(|i| u32_at(head, i * 4) as usize);
        let (id, rest) = rest.split_at_checked(id_len)?;
        bytes = rest;
        let in_order = headings.last().is_none_or(|h| h.text.start <= start);
        if start > end || !in_order || plain.get(start..end).is_none() {
            return None;
        }
        headings.push(Heading {
            text: start..end,
            id: String::from_utf8(id.to_vec()).ok()?,
        });
    }
    Some(headings)
}

/// Builds `terms.bin` and `impacts.bin` in memory; terms must be pushed in ascending order.
#[derive(Default)]
pub(super) struct TermsWriter {
    index: Vec<u8>,
    blocks: Vec<u8>,
    block_start: usize,
    impacts: Vec<u8>,
    count: usize,
}

impl TermsWriter {
    /// Adds a term and its pages with their impacts (ascending page numbers).
    pub(super) fn push(&mut self, term: &str, pages: &[(u32, u16)]) {
        // Terms are at most `MAX_TERM_BYTES` long: the length fits a byte.
        let term = &term.as_bytes()[..term.len().min(usize::from(u8::MAX))];
        if self.count.is_multiple_of(TERMS_BLOCK) {
            self.close_block();
            self.index.push(term.len() as u8);
            self.index.extend_from_slice(term);
        }
        let offset = self.impacts.len() as u64;
        put_varint(pages.len() as u32, &mut self.impacts);
        let mut prev = 0;
        for &(page, impact) in pages {
            put_varint(page - prev, &mut self.impacts);
            self.impacts.extend_from_slice(&impact.to_le_bytes());
            prev = page;
        }
        self.blocks.push(term.len() as u8);
        self.blocks.extend_from_slice(term);
        self.blocks
            .extend_from_slice(&(pages.len() as u32).to_le_bytes());
        self.blocks.extend_from_slice(&offset.to_le_bytes());
        let len = (self.impacts.len() as u64 - offset) as u32;
        self.blocks.extend_from_slice(&len.to_le_bytes());
        self.count += 1;
    }

    /// Ends the block being written: its offset and length go into the block index.
    fn close_block(&mut self) {
        if self.count > 0 {
            let len = self.blocks.len() - self.block_start;
            self.index
                .extend_from_slice(&(self.block_start as u32).to_le_bytes());
            self.index.extend_from_slice(&(len as u32).to_le_bytes());
            self.block_start = self.blocks.len();
        }
    }

    /// `terms.bin` and `impacts.bin`.
    pub(super) fn finish(mut self, build_id: u64) -> (Vec<u8>, Vec<u8>) {
        self.close_block();
        let blocks = self.count.div_ceil(TERMS_BLOCK);
        let mut out = Vec::with_capacity(TERMS_HEADER + self.index.len() + self.blocks.len());
        out.extend_from_slice(TERMS_MAGIC);
        out.extend_from_slice(&build_id.to_le_bytes());
        out.extend_from_slice(&(self.count as u32).to_le_bytes());
        out.extend_from_slice(&(blocks as u32).to_le_bytes());
        out.extend_from_slice(&(self.index.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.index);
        out.extend_from_slice(&self.blocks);
        (out, self.impacts)
    }
}

/// One term of the term table: how many pages hold it and where their impacts are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TermEntry {
    pub(super) term: String,
    pub(super) df: u32,
    pub(super) offset: u64,
    pub(super) len: u32,
}

/// The term table, opened: header and block index read, blocks read as a word needs them.
pub(super) struct Terms {
    file: File,
    path: PathBuf,
    build_id: u64,
    /// Each block's first term, offset and length.
    blocks: Vec<(Vec<u8>, u64, usize)>,
    base: u64,
}

impl Terms {
    pub(super) fn open(path: &Path) -> Result<Terms, IndexError> {
        let mut file = open(path)?;
        let mut head = file
            .read_ranges(&[(0, TERMS_HEADER + HEAD_GUESS)])
            .map_err(|e| IndexError::io(path, e))?
            .remove(0);
        if head.len() < TERMS_HEADER || &head[..4] != TERMS_MAGIC {
            return Err(damaged(path));
        }
        let build_id = u64_at(&head, 4);
        let count = u32_at(&head, 12) as usize;
        let block_count = u32_at(&head, 16) as usize;
        let index_len = u32_at(&head, 20) as usize;
        if block_count != count.div_ceil(TERMS_BLOCK) {
            return Err(damaged(path));
        }
        let end = TERMS_HEADER + index_len;
        if head.len() < end {
            let have = head.len();
            head.extend(read_at(&mut file, path, have as u64, end - have)?);
        }
        let index = &head[TERMS_HEADER..end];
        let mut blocks = Vec::with_capacity(block_count);
        let mut at = 0;
        for _ in 0..block_count {
            let len = usize::from(*index.get(at).ok_or_else(|| damaged(path))?);
            let entry = index
                .get(at + 1..at + 1 + len + 8)
                .ok_or_else(|| damaged(path))?;
            let (first, place) = entry.split_at(len);
            blocks.push((
                first.to_vec(),
                u64::from(u32_at(place, 0)),
                u32_at(place, 4) as usize,
            ));
            at += 1 + len + 8;
        }
        Ok(Terms {
            file,
            path: path.to_path_buf(),
            build_id,
            blocks,
            base: end as u64,
        })
    }

    pub(super) fn build_id(&self) -> u64 {
        self.build_id
    }

    /// The terms from `from` on, in order, as long as `wanted` says so (`Some(true)`: take
    /// it, `Some(false)`: skip it, `None`: stop), reading a block at a time.
    pub(super) fn scan(
        &mut self,
        from: &str,
        mut wanted: impl FnMut(&str) -> Option<bool>,
    ) -> Result<Vec<TermEntry>, IndexError> {
        let mut out = Vec::new();
        let start = self
            .blocks
            .partition_point(|(first, ..)| first.as_slice() <= from.as_bytes())
            .saturating_sub(1);
        for b in start..self.blocks.len() {
            let (_, offset, len) = self.blocks[b];
            let bytes = read_at(&mut self.file, &self.path, self.base + offset, len)?;
            let mut at = 0;
            while at < bytes.len() {
                let term_len = usize::from(bytes[at]);
                let entry = bytes
                    .get(at + 1..at + 1 + term_len + 16)
                    .ok_or_else(|| damaged(&self.path))?;
                at += 1 + term_len + 16;
                let (term, place) = entry.split_at(term_len);
                let term = std::str::from_utf8(term).map_err(|_| damaged(&self.path))?;
                if term < from {
                    continue;
                }
                match wanted(term) {
                    None => return Ok(out),
                    Some(false) => {}
                    Some(true) => out.push(TermEntry {
                        term: term.to_owned(),
                        df: u32_at(place, 0),
                        offset: u64_at(place, 4),
                        len: u32_at(place, 12),
                    }),
                }
            }
        }
        Ok(out)
    }
}

/// Decodes a term's pages and impacts; `None` when the bytes are not that.
pub(super) fn decode_impacts(bytes: &[u8], pages: u32) -> Option<Vec<(u32, u16)>> {
    let mut at = 0;
    let count = get_varint(bytes, &mut at)? as usize;
    let mut out = Vec::with_capacity(count.min(pages as usize));
    let mut page = 0u32;
    for _ in 0..count {
        page = page.checked_add(get_varint(bytes, &mut at)?)?;
        let impact = bytes.get(at..at + 2)?;
        at += 2;
        if page >= pages {
            return None;
        }
        out.push((page, u16::from_le_bytes([impact[0], impact[1]])));
    }
    (at == bytes.len()).then_some(out)
}

fn put_varint(mut x: u32, out: &mut Vec<u8>) {
    while x >= 0x80 {
        out.push((x as u8) | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let mut x: u32 = 0;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        x |= u32::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(x);
        }
    }
    None
}

/// Appends a sorted list of page numbers, as deltas or as a bitmap, whichever is smaller.
pub(super) fn encode_postings(list: &[u32], pages: u32, out: &mut Vec<u8>) {
    let mut deltas = Vec::with_capacity(list.len() + 5);
    put_varint(list.len() as u32, &mut deltas);
    let mut prev = 0;
    for (i, &n) in list.iter().enumerate() {
        put_varint(if i == 0 { n } else { n - prev }, &mut deltas);
        prev = n;
    }
    let bitmap_len = (pages as usize).div_ceil(8);
    if deltas.len() <= bitmap_len {
        out.push(0);
        out.extend_from_slice(&deltas);
    } else {
        out.push(1);
        let start = out.len();
        out.resize(start + bitmap_len, 0);
        for &n in list {
            out[start + (n / 8) as usize] |= 1 << (n % 8);
        }
    }
}

/// A posting list as stored: page numbers, or a bitmap kept as its bytes, so that a dense
/// list (a common word's) is intersected a byte at a time instead of decoded.
#[derive(Debug)]
pub(super) enum Postings {
    /// Page numbers, ascending.
    List(Vec<u32>),
    /// One bit per page.
    Bitmap(Vec<u8>),
}

impl Postings {
    /// Parses a posting list; `None` when the bytes are not one.
    pub(super) fn parse(bytes: &[u8], pages: u32) -> Option<Postings> {
        match bytes.first()? {
            0 => decode_postings(bytes, pages).map(Postings::List),
            1 => {
                let bits = &bytes[1..];
                (bits.len() == (pages as usize).div_ceil(8))
                    .then(|| Postings::Bitmap(bits.to_vec()))
            }
            _ => None,
        }
    }

    fn contains(&self, n: u32) -> bool {
        match self {
            Postings::List(list) => list.binary_search(&n).is_ok(),
            Postings::Bitmap(bits) => bits
                .get((n / 8) as usize)
                .is_some_and(|b| b & (1 << (n % 8)) != 0),
        }
    }

    /// The pages in every list, ascending.
    pub(super) fn intersect(lists: &[&Postings], pages: u32) -> Vec<u32> {
        let shortest = lists
            .iter()
            .filter_map(|p| match p {
                Postings::List(list) => Some(list),
                Postings::Bitmap(_) => None,
            })
            .min_by_key(|list| list.len());
        if let Some(base) = shortest {
            let mut out = base.clone();
            for p in lists {
                match p {
                    Postings::List(list) if std::ptr::eq(list, base) => {}
                    // Lists of a similar length (the words of a query, each in most pages)
                    // are walked side by side; a far longer one is searched.
                    Postings::List(list) if list.len() / 16 <= out.len() => {
                        out = merge_common(&out, list);
                    }
                    _ => out.retain(|&n| p.contains(n)),
                }
            }
            return out;
        }
        let mut and: Option<Vec<u8>> = None;
        for p in lists {
            if let Postings::Bitmap(bits) = p {
                and = Some(match and {
                    None => bits.clone(),
                    Some(acc) => acc.iter().zip(bits).map(|(a, b)| a & b).collect(),
                });
            }
        }
        let mut out = Vec::new();
        for (i, &byte) in and.unwrap_or_default().iter().enumerate() {
            let mut b = byte;
            while b != 0 {
                let n = (i as u32) * 8 + b.trailing_zeros();
                if n < pages {
                    out.push(n);
                }
                b &= b - 1;
            }
        }
        out
    }
}

/// The numbers in both ascending lists.
fn merge_common(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len().min(b.len()));
    let (mut i, mut j) = (0, 0);
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        match x.cmp(&y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(x);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Decodes a posting list; `None` when the bytes are not one.
pub(super) fn decode_postings(bytes: &[u8], pages: u32) -> Option<Vec<u32>> {
    match bytes.first()? {
        0 => {
            let mut at = 1;
            let count = get_varint(bytes, &mut at)? as usize;
            let mut out = Vec::with_capacity(count.min(pages as usize));
            let mut prev = 0u32;
            for i in 0..count {
                let d = get_varint(bytes, &mut at)?;
                prev = if i == 0 { d } else { prev.checked_add(d)? };
                out.push(prev);
            }
            Some(out)
        }
        1 => {
            let bits = &bytes[1..];
            let mut out = Vec::new();
            for (i, &byte) in bits.iter().enumerate() {
                let mut b = byte;
                while b != 0 {
                    let bit = b.trailing_zeros();
                    let n = (i as u32) * 8 + bit;
                    if n < pages {
                        out.push(n);
                    }
                    b &= b - 1;
                }
            }
            Some(out)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postings_round_trip_both_encodings() {
        for (list, pages) in [
            (vec![], 10),
            (vec![0], 1),
            (vec![3, 7, 300, 70_000], 100_000),
            ((0..1000).collect::<Vec<_>>(), 1000),
            ((0..1000).step_by(3).collect(), 1003),
        ] {
            let mut out = Vec::new();
            encode_postings(&list, pages, &mut out);
            assert_eq!(decode_postings(&out, pages), Some(list.clone()));
        }
        // A dense list is a bitmap, a sparse one deltas.
        let mut out = Vec::new();
        encode_postings(&(0..1000).collect::<Vec<_>>(), 1000, &mut out);
        assert_eq!((out[0], out.len()), (1, 126));
        let mut out = Vec::new();
        encode_postings(&[5, 900], 1000, &mut out);
        assert_eq!(out[0], 0);
        assert_eq!(decode_postings(&[7, 1], 10), None);
        // Intersections agree with decoding, whatever the mix of encodings.
        let pages = 1000;
        let sets: Vec<Vec<u32>> = vec![
            (0..1000).collect(),
            (0..1000).step_by(2).collect(),
            (0..1000).filter(|n| n % 3 != 0).collect(),
            vec![4, 6, 500, 998],
            vec![],
        ];
        for a in &sets {
            for b in &sets {
                let lists: Vec<Postings> = [a, b]
                    .iter()
                    .map(|l| {
                        let mut out = Vec::new();
                        encode_postings(l, pages, &mut out);
                        Postings::parse(&out, pages).unwrap()
                    })
                    .collect();
                let want: Vec<u32> = a.iter().copied().filter(|n| b.contains(n)).collect();
                let lists: Vec<&Postings> = lists.iter().collect();
                assert_eq!(Postings::intersect(&lists, pages), want);
            }
        }
        assert!(Postings::parse(&[1, 0], pages).is_none());
        assert_eq!(decode_postings(&[0, 2, 1], 10), None);
    }

    #[test]
    fn page_records_read_together_match_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.bin");
        let mut w = PagesWriter::default();
        // A page as written and read: subproject, id, title, and (file, plain text, summary,
        // headings).
        type Page = (u32, String, String, (Vec<u8>, String, String, Vec<Heading>));
        let want: Vec<Page> = (0..1000u32)
            .map(|n| {
                let title = if n % 3 == 0 {
                    String::new()
                } else {
                    format!("Tïtle {n}")
                };
                let raw = format!("# Page {n}\n\n{}", "wörds ".repeat(n as usize % 50));
                let plain = format!("Page {n} {}", "wörds ".repeat(n as usize % 7));
                let summary = "Sümmary ".repeat(n as usize % 3);
                // Headings over the plain text's words, none in some pages, one empty.
                let headings = (0..n as usize % 4)
                    .map(|k| Heading {
                        text: 5 + k * 7..if k == 2 { 5 + k * 7 } else { 11 + k * 7 },
                        id: format!("wörds-{k}"),
                    })
                    .filter(|h| plain.get(h.text.clone()).is_some())
                    .collect();
                (
                    n / 7,
                    format!("page-{n}"),
                    title,
                    (raw.into_bytes(), plain, summary, headings),
                )
            })
            .collect();
        for (sub, id, title, (raw, plain, summary, headings)) in &want {
            w.push(*sub, id, title, raw, plain, summary, headings)
                .unwrap();
        }
        let bytes = w.finish(9);
        std::fs::write(&path, &bytes).unwrap();
        let mut pages = PagesFile::open(&path).unwrap();
        assert_eq!(pages.build_id(), 9);
        let read = |pages: &mut PagesFile, numbers: &[u32]| {
            let records = pages.records(numbers).unwrap();
            records
                .iter()
                .map(|r| {
                    let raw = pages.raw(r).unwrap();
                    let t = pages.text(r, &raw).unwrap();
                    let text = (raw, t.plain, t.summary, t.headings);
                    (r.sub, r.id.clone(), r.title.clone(), text)
                })
                .collect::<Vec<_>>()
        };
        let all: Vec<u32> = (0..1000).collect();
        assert_eq!(read(&mut pages, &all), want);
        let some = [0, 1, 127, 128, 129, 500, 999];
        let expected: Vec<_> = some.iter().map(|&n| want[n as usize].clone()).collect();
        assert_eq!(read(&mut pages, &some), expected);
        assert!(pages.records(&[]).unwrap().is_empty());
        assert!(matches!(
            pages.records(&[1000]),
            Err(IndexError::Damaged { .. })
        ));

        // A flipped byte in the last page's text is damage, not a different page; its file
        // still reads.
        let mut broken = bytes.clone();
        let last = broken.len() - 1;
        broken[last] ^= 0x55;
        std::fs::write(&path, &broken).unwrap();
        let mut pages = PagesFile::open(&path).unwrap();
        let first = pages.records(&[0]).unwrap();
        let raw = pages.raw(&first[0]).unwrap();
        assert!(pages.text(&first[0], &raw).is_ok());
        let last = pages.records(&[999]).unwrap();
        let raw = pages.raw(&last[0]).unwrap();
        assert!(matches!(
            pages.text(&last[0], &raw),
            Err(IndexError::Damaged { .. })
        ));

        // A recorded size far past what the packed bytes can hold is damage (refused before
        // anything is allocated for it).
        let mut broken = bytes.clone();
        let raw_size = PAGES_HEADER + 1001 * 8 + 12;
        broken[raw_size..raw_size + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&path, &broken).unwrap();
        let mut pages = PagesFile::open(&path).unwrap();
        let first = pages.records(&[0]).unwrap();
        assert!(matches!(
            pages.raw(&first[0]),
            Err(IndexError::Damaged { .. })
        ));

        // A table of starts that points outside the data, or backwards, is damage, never a
        // panic or a huge read.
        let starts = PAGES_HEADER + 1000 * 8;
        for bad in [u64::MAX, 0] {
            let mut broken = bytes.clone();
            broken[starts..starts + 8].copy_from_slice(&bad.to_le_bytes());
            std::fs::write(&path, &broken).unwrap();
            let mut pages = PagesFile::open(&path).unwrap();
            assert!(matches!(
                pages.records(&[999]),
                Err(IndexError::Damaged { .. })
            ));
            assert!(pages.records(&[0]).is_ok());
        }
    }

    #[test]
    fn term_table_scans_prefixes_across_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("terms.bin");
        let mut terms: Vec<String> = (0..1000).map(|n| format!("t{n:04}")).collect();
        terms.push("é".repeat(40));
        terms.sort();
        let mut w = TermsWriter::default();
        for (n, term) in terms.iter().enumerate() {
            let pages: Vec<(u32, u16)> = (0..n as u32 % 5).map(|p| (p * 3, p as u16 + 1)).collect();
            w.push(term, &pages);
        }
        let (table, impacts) = w.finish(4);
        std::fs::write(&path, table).unwrap();
        let mut read = Terms::open(&path).unwrap();
        assert_eq!(read.build_id(), 4);
        // Every term of a prefix, across the edges of blocks of 128.
        let found = read
            .scan("t01", |t| t.starts_with("t01").then_some(true))
            .unwrap();
        let names: Vec<&str> = found.iter().map(|e| e.term.as_str()).collect();
        let expected: Vec<String> = (100..200).map(|n| format!("t{n:04}")).collect();
        assert_eq!(names, expected);
        for entry in &found {
            let n = terms.iter().position(|t| *t == entry.term).unwrap();
            let bytes = &impacts[entry.offset as usize..][..entry.len as usize];
            let pages = decode_impacts(bytes, 20).unwrap();
            assert_eq!(entry.df as usize, pages.len());
            assert_eq!(pages.len(), n % 5);
            assert!(
                pages
                    .iter()
                    .enumerate()
                    .all(|(p, &(page, impact))| page == p as u32 * 3 && impact == p as u16 + 1)
            );
            // Pages past the count are damage.
            assert!(pages.len() < 2 || decode_impacts(bytes, 1).is_none());
        }
        let last = read.scan("é", |t| Some(t.starts_with('é'))).unwrap();
        assert_eq!(last.len(), 1);
        assert!(read.scan("ê", |_| Some(true)).unwrap().is_empty());
        assert_eq!(read.scan("", |_| None).unwrap(), []);
    }

    #[test]
    fn key_table_finds_every_key_across_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.bin");
        let mut w = GramsWriter::default();
        let keys: Vec<u32> = (0..1000).map(|i| i * 7 + 3).collect();
        for (i, &k) in keys.iter().enumerate() {
            w.push(k, i as u64 * 10, i as u32);
        }
        std::fs::write(&path, w.finish(42)).unwrap();
        let mut g = Grams::open(&path).unwrap();
        assert_eq!(g.build_id(), 42);
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(g.find(k).unwrap(), Some((i as u64 * 10, i as u32)));
            assert_eq!(g.find(k + 1).unwrap(), None);
        }
        assert_eq!(g.find(0).unwrap(), None);
        assert_eq!(g.find(u32::MAX).unwrap(), None);
    }
}
