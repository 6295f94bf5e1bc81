//! A [`CheckMemo`] in a Spin key-value store, for the components.

use std::cell::OnceCell;

use dochub_spin_imports::store::{self, Bucket};

use crate::{CheckMemo, Memo};

/// A key-value store, opened the first time the memo is used: only an answer from a copied
/// build needs it.
struct KvMemo {
    label: String,
    bucket: OnceCell<Option<Bucket>>,
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
        self.bucket()?.get(key).ok().flatten()
    }

    fn save(&self, key: &str, bytes: &[u8]) {
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
    /// `key_value_stores`).
    pub fn key_value(label: &str) -> Memo {
        Memo(std::rc::Rc::new(KvMemo {
            label: label.to_owned(),
            bucket: OnceCell::new(),
        }))
    }
}
