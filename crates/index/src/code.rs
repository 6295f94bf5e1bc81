//! `code.bin`: each page's fenced code blocks, highlighted by `dochub build` (see
//! `dochub-highlight`, behind this crate's `highlight` feature), for the docs site to show
//! without highlighting anything itself.
//!
//! ```text
//! code.bin  "DHC1" | build_id u64 | pages u32 | 0 u32
//!           | starts: (pages + 1) x u64, where each page's entry starts in the data
//!           | data: each page's entry (empty for a page without highlighted blocks):
//!             unpacked_len u32, hash u64 of the packed block, then one LZ4 block of
//!             (key u64, html_len u32, html) per highlighted block
//! ```
//!
//! A page's entry costs two reads: its bounds, then the entry.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::IndexError;
use dochub_content::fsio::File;

use crate::format::{damaged, entry_table, open, read_at, u32_at, u64_at};

const CODE_MAGIC: &[u8; 4] = b"DHC1";
const CODE_HEADER: usize = 20;
/// The fixed fields that open a non-empty entry.
const ENTRY_HEAD: usize = 12;

/// Builds `code.bin` in memory, one page at a time in page-number order.
#[derive(Default)]
pub(crate) struct CodeWriter {
    starts: Vec<u64>,
    data: Vec<u8>,
}

impl CodeWriter {
    /// Adds the next page's highlighted blocks, `(key, html)`.
    pub(crate) fn push(&mut self, blocks: &[(u64, String)]) {
        self.starts.push(self.data.len() as u64);
        if blocks.is_empty() {
            return;
        }
        let mut unpacked = Vec::new();
        for (key, html) in blocks {
            unpacked.extend_from_slice(&key.to_le_bytes());
            unpacked.extend_from_slice(&(html.len() as u32).to_le_bytes());
            unpacked.extend_from_slice(html.as_bytes());
        }
        let packed = lz4_flex::block::compress(&unpacked);
        self.data
            .extend_from_slice(&(unpacked.len() as u32).to_le_bytes());
        self.data
            .extend_from_slice(&crate::hash(&packed).to_le_bytes());
        self.data.extend_from_slice(&packed);
    }

    pub(crate) fn finish(self, build_id: u64) -> Vec<u8> {
        entry_table(CODE_MAGIC, build_id, &self.starts, &self.data)
    }
}

/// An opened `code.bin`.
pub(crate) struct CodeFile {
    file: File,
    path: PathBuf,
    build_id: u64,
    count: u32,
}

impl CodeFile {
    pub(crate) fn open(path: &Path) -> Result<CodeFile, IndexError> {
        let mut file = open(path)?;
        let header = read_at(&mut file, path, 0, CODE_HEADER)?;
        if &header[..4] != CODE_MAGIC {
            return Err(damaged(path));
        }
        Ok(CodeFile {
            build_id: u64_at(&header, 4),
            count: u32_at(&header, 12),
            file,
            path: path.to_path_buf(),
        })
    }

    pub(crate) fn build_id(&self) -> u64 {
        self.build_id
    }

    /// Page `n`'s highlighted blocks, by key.
    pub(crate) fn blocks(&mut self, n: u32) -> Result<HashMap<u64, String>, IndexError> {
        if n >= self.count {
            return Err(damaged(&self.path));
        }
        let bounds = read_at(
            &mut self.file,
            &self.path,
            CODE_HEADER as u64 + u64::from(n) * 8,
            16,
        )?;
        let (start, end) = (u64_at(&bounds, 0), u64_at(&bounds, 8));
        let len = end
            .checked_sub(start)
            .and_then(|len| usize::try_from(len).ok())
            .ok_or_else(|| damaged(&self.path))?;
        let mut blocks = HashMap::new();
        if len == 0 {
            return Ok(blocks);
        }
        if len < ENTRY_HEAD {
            return Err(damaged(&self.path));
        }
        let data_at = CODE_HEADER as u64 + (u64::from(self.count) + 1) * 8;
        let entry = read_at(&mut self.file, &self.path, data_at + start, len)?;
        let unpacked_len = u32_at(&entry, 0) as usize;
        let hash = u64_at(&entry, 4);
        let packed = &entry[ENTRY_HEAD..];
        // LZ4 expands at most 255 times; a larger claim is damage, not an allocation to make.
        if crate::hash(packed) != hash || unpacked_len > packed.len().saturating_mul(255) + 16 {
            return Err(damaged(&self.path));
        }
        let unpacked =
            lz4_flex::block::decompress(packed, unpacked_len).map_err(|_| damaged(&self.path))?;
        let mut at = 0;
        while at < unpacked.len() {
            let head = unpacked
                .get(at..at + 12)
                .ok_or_else(|| damaged(&self.path))?;
            let (key, html_len) = (u64_at(head, 0), u32_at(head, 8) as usize);
            let html = unpacked
                .get(at + 12..at + 12 + html_len)
                .and_then(|b| std::str::from_utf8(b).ok())
                .ok_or_else(|| damaged(&self.path))?;
            blocks.insert(key, html.to_owned());
            at += 12 + html_len;
        }
        Ok(blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_read_back_by_page_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("code.bin");
        let mut writer = CodeWriter::default();
        writer.push(&[
            (7, "<span class=\"hl-k\">fn</span>".into()),
            (9, "x".into()),
        ]);
        writer.push(&[]);
        writer.push(&[(1, "é".repeat(1000))]);
        std::fs::write(&path, writer.finish(42)).unwrap();
        let mut file = CodeFile::open(&path).unwrap();
        assert_eq!(file.build_id(), 42);
        let first = file.blocks(0).unwrap();
        assert_eq!(first.len(), 2);
        assert_eq!(first[&7], "<span class=\"hl-k\">fn</span>");
        assert!(file.blocks(1).unwrap().is_empty());
        assert_eq!(file.blocks(2).unwrap()[&1], "é".repeat(1000));
        assert!(file.blocks(3).is_err(), "no such page");

        // A flipped byte in the packed block is caught by its hash.
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x55;
        std::fs::write(&path, &bytes).unwrap();
        let mut file = CodeFile::open(&path).unwrap();
        assert!(matches!(file.blocks(2), Err(IndexError::Damaged { .. })));
        assert_eq!(file.blocks(0).unwrap().len(), 2);
    }
}
