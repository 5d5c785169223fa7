//! A temporary directory for the tests, removed when dropped.

use std::path::{Path, PathBuf};

pub struct TestDir(PathBuf);

impl TestDir {
    /// A fresh directory named after `name`, the process and the thread (tests run in
    /// parallel).
    pub fn new(name: &str) -> TestDir {
        let dir = std::env::temp_dir().join(format!(
            "pfgen-core-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary directory");
        TestDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
