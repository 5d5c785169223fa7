//! The one mapping of the core's errors to Python exceptions: failures to read or write a file
//! raise OSError (the subclass of the failure's kind, as pyo3 converts `std::io::Error`),
//! a chunk's run, question or answer that is not there IndexError, everything else ValueError.

use std::path::{Path, PathBuf};

use pyo3::exceptions::{PyIndexError, PyOSError, PyValueError};
use pyo3::PyErr;

use pfgen_core::evalmm::TextsError;
use pfgen_core::pfgen::construct::rare_ngrams::RareNgramError;
use pfgen_core::pfgen::reference::ReferenceError;
use pfgen_core::pfgen::table_file::TableFileError;
use pfgen_core::pfgen::trials_chunk::ChunkError;

/// A core error, with the file it concerns when the core does not name it.
pub(crate) enum CoreError {
    Reference(ReferenceError),
    RareNgrams(RareNgramError),
    TableFile(PathBuf, TableFileError),
    Texts(TextsError),
    Chunk(ChunkError),
}

impl CoreError {
    pub(crate) fn table_file(path: &Path) -> impl FnOnce(TableFileError) -> CoreError + '_ {
        move |error| CoreError::TableFile(path.to_path_buf(), error)
    }
}

impl From<ReferenceError> for CoreError {
    fn from(error: ReferenceError) -> Self {
        CoreError::Reference(error)
    }
}

impl From<RareNgramError> for CoreError {
    fn from(error: RareNgramError) -> Self {
        CoreError::RareNgrams(error)
    }
}

impl From<TextsError> for CoreError {
    fn from(error: TextsError) -> Self {
        CoreError::Texts(error)
    }
}

impl From<ChunkError> for CoreError {
    fn from(error: ChunkError) -> Self {
        CoreError::Chunk(error)
    }
}

impl From<CoreError> for PyErr {
    fn from(error: CoreError) -> PyErr {
        match error {
            CoreError::Reference(error) => PyValueError::new_err(error.to_string()),
            CoreError::RareNgrams(error @ RareNgramError::Io(..)) => {
                PyOSError::new_err(error.to_string())
            }
            CoreError::RareNgrams(error) => PyValueError::new_err(error.to_string()),
            CoreError::TableFile(_, TableFileError::Io(error)) => error.into(),
            CoreError::TableFile(path, error) => {
                PyValueError::new_err(format!("{}: {error}", path.display()))
            }
            CoreError::Texts(error) => PyValueError::new_err(error.to_string()),
            CoreError::Chunk(
                error @ (ChunkError::NotScored(..) | ChunkError::AlreadyScored(_)),
            ) => PyValueError::new_err(error.to_string()),
            CoreError::Chunk(error) => PyIndexError::new_err(error.to_string()),
        }
    }
}
