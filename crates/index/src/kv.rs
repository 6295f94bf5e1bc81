//! A [`CheckMemo`] in a Spin key-value store, for the components.

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;

use dochub_spin_imports::store::{self, Bucket};

use crate::{CheckMemo, Memo};

/// A key-value store, opened the first time the memo is used: only an answer from a copied
/// build needs it.
struct KvMemo {
    label: String,
    bucket: OnceCell<Option<Bucket>>,
    /// What was read or saved already, so that a memo kept for many requests (a reused
    /// instance's) reads each key from the store once.
    known: RefCell<HashMap<String, Vec<u8>>>,
}

impl KvMemo {
    fn bucket(&self) -> Option<&Bucket> {
        self.bucket
            .get_or_init(|| match store::open(&self.label) {
                Ok(bucket) => Some(bucket),
                Err(e) => {
                    // Every answer then checks the whole copy again: slow, still correct.
                    eprintln!(
                        "warning: cannot keep the index check in key-value store `{}`: {e:?}",
                        self.label
                    );
                    None
                }
            })
            .as_ref()
    }
}

impl CheckMemo for KvMemo {
    fn load(&self, key: &str) -> Option<Vec<u8>> {
        if let Some(bytes) = self.known.borrow().get(key) {
            return Some(bytes.clone());
        }
        let bytes = self.bucket()?.get(key).ok().flatten()?;
        self.known
            .borrow_mut()
            .insert(key.to_owned(), bytes.clone());
        Some(bytes)
    }

    fn save(&self, key: &str, bytes: &[u8]) {
        self.known
            .borrow_mut()
            .insert(key.to_owned(), bytes.to_vec());
        if let Some(bucket) = self.bucket()
            && let Err(e) = bucket.set(key, bytes)
        {
            eprintln!(
                "warning: cannot keep the index check in key-value store `{}`: {e:?}",
                self.label
            );
        }
    }
}

impl Memo {
    /// The memo in the key-value store `label` (declared in the component's
    /// `key_value_stores`). What it reads or saves it also keeps in memory for its life: a key
    /// names one copy of one build (the build's id and the copy's time), whose check does not
    /// change, so a memo kept by a reused instance never answers staler than the store.
    pub fn key_value(label: &str) -> Memo {
        Memo(std::rc::Rc::new(KvMemo {
            label: label.to_owned(),
            bucket: OnceCell::new(),
            known: RefCell::new(HashMap::new()),
        }))
    }
}
