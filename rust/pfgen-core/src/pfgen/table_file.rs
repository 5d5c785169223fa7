//! A question's built tables as a file, so that a later run loads them instead of building
//! them again (loading is several times quicker; docs/performance.md).
//!
//! The file is for the machine and build that wrote it (values in native byte order; the
//! caller keys files by the core's build): a header of u64 words, each table's slots and
//! text as they are in memory, and a checksum of all of it, so that a damaged file is refused
//! instead of scoring wrongly.

use std::io::{self, Read, Write};

use crate::common::page_buffer::PageBuffer;
use crate::pfgen::ngram_table::{NgramTable, Slot};
use crate::pfgen::reference::ReferenceTables;

const MAGIC: &[u8; 8] = b"PFGTBL01";
/// A header bigger than this is not one of ours (a source count or a table count gone wild).
const MAX_HEADER_WORDS: u64 = 1 << 16;

#[derive(Debug)]
pub enum TableFileError {
    Io(io::Error),
    /// Not a table file of this format, or damaged.
    Invalid(&'static str),
}

impl std::fmt::Display for TableFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableFileError::Io(error) => write!(f, "{error}"),
            TableFileError::Invalid(what) => write!(f, "not a valid table file: {what}"),
        }
    }
}

impl std::error::Error for TableFileError {}

impl From<io::Error> for TableFileError {
    fn from(error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::UnexpectedEof {
            TableFileError::Invalid("truncated")
        } else {
            TableFileError::Io(error)
        }
    }
}

/// A 64-bit checksum over 8-byte words in four independent lanes (fast enough not to matter
/// next to reading the bytes).
struct Checksum([u64; 4]);

impl Checksum {
    fn new() -> Self {
        Checksum([1, 2, 3, 4])
    }

    fn add(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(32);
        for chunk in &mut words {
            for (lane, word) in self.0.iter_mut().zip(chunk.chunks_exact(8)) {
                let word = u64::from_ne_bytes(word.try_into().unwrap_or_default());
                *lane = (*lane ^ word)
                    .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    .rotate_left(29);
            }
        }
        for &byte in words.remainder() {
            self.0[0] = (self.0[0] ^ u64::from(byte)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn value(&self) -> u64 {
        self.0
            .iter()
            .fold(0u64, |sum, &lane| sum.rotate_left(17) ^ lane)
    }
}

/// Writes and checksums.
struct Writer<W: Write> {
    out: W,
    checksum: Checksum,
}

impl<W: Write> Writer<W> {
    fn bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.checksum.add(bytes);
        self.out.write_all(bytes)
    }

    fn word(&mut self, word: u64) -> io::Result<()> {
        self.bytes(&word.to_ne_bytes())
    }
}

/// Reads and checksums.
struct Reader<R: Read> {
    input: R,
    checksum: Checksum,
    /// Bytes of the file not read yet.
    remaining: u64,
}

impl<R: Read> Reader<R> {
    fn bytes(&mut self, bytes: &mut [u8]) -> io::Result<()> {
        self.input.read_exact(bytes)?;
        self.checksum.add(bytes);
        self.remaining = self.remaining.saturating_sub(bytes.len() as u64);
        Ok(())
    }

    fn word(&mut self) -> io::Result<u64> {
        let mut word = [0; 8];
        self.bytes(&mut word)?;
        Ok(u64::from_ne_bytes(word))
    }

    /// A count of header items, bounded.
    fn count(&mut self) -> Result<usize, TableFileError> {
        let count = self.word()?;
        if count > MAX_HEADER_WORDS {
            return Err(TableFileError::Invalid("a count beyond its bounds"));
        }
        Ok(count as usize)
    }
}

impl ReferenceTables {
    /// Writes the tables (see the module's documentation).
    pub fn write_to(&self, out: impl Write) -> io::Result<()> {
        let mut writer = Writer {
            out,
            checksum: Checksum::new(),
        };
        writer.bytes(MAGIC)?;
        let (tables, baselines, num_answers) = self.parts();
        writer.word(baselines.len() as u64)?;
        for (&baseline, answers) in baselines.iter().zip(num_answers) {
            writer.word(baseline.to_bits())?;
            writer.word(answers as u64)?;
        }
        writer.word(tables.len() as u64)?;
        for table in tables {
            let (slots, text, header) = table.parts();
            for value in header {
                writer.word(value as u64)?;
            }
            writer.word(slots.len() as u64)?;
            writer.word(text.len() as u64)?;
            writer.bytes(as_bytes(slots))?;
            writer.bytes(as_bytes(text))?;
        }
        let checksum = writer.checksum.value();
        writer.out.write_all(&checksum.to_ne_bytes())?;
        writer.out.flush()
    }

    /// Reads tables that `write_to` wrote, from a file of `length` bytes.
    pub fn read_from(input: impl Read, length: u64) -> Result<Self, TableFileError> {
        let mut reader = Reader {
            input,
            checksum: Checksum::new(),
            remaining: length,
        };
        let mut magic = [0; 8];
        reader.bytes(&mut magic)?;
        if &magic != MAGIC {
            return Err(TableFileError::Invalid("unknown format"));
        }
        let num_sources = reader.count()?;
        let mut baselines = Vec::with_capacity(num_sources);
        let mut num_answers = Vec::with_capacity(num_sources);
        for _ in 0..num_sources {
            baselines.push(f64::from_bits(reader.word()?));
            num_answers.push(reader.word()? as usize);
        }
        let num_tables = reader.count()?;
        let mut tables = Vec::with_capacity(num_tables);
        for _ in 0..num_tables {
            let header = [reader.word()?, reader.word()?, reader.word()?];
            let header = header.map(|value| value as usize);
            // Sizes beyond what is left of the file are refused before they are allocated.
            let num_slots = reader.word()?;
            let text_length = reader.word()?;
            let bytes = num_slots
                .checked_mul(std::mem::size_of::<Slot>() as u64)
                .zip(text_length.checked_mul(4))
                .and_then(|(slots, text)| slots.checked_add(text));
            if bytes.is_none_or(|bytes| bytes > reader.remaining) {
                return Err(TableFileError::Invalid("truncated"));
            }
            let mut slots = PageBuffer::filled(Slot::default(), num_slots as usize, 0);
            let mut text = vec![0u32; text_length as usize];
            reader.bytes(as_bytes_mut(&mut slots))?;
            reader.bytes(as_bytes_mut(&mut text))?;
            let table = NgramTable::from_parts(slots, text, header)
                .ok_or(TableFileError::Invalid("inconsistent table"))?;
            tables.push(table);
        }
        let expected = reader.checksum.value();
        let mut stored = [0; 8];
        reader.input.read_exact(&mut stored)?;
        if u64::from_ne_bytes(stored) != expected {
            return Err(TableFileError::Invalid("checksum mismatch"));
        }
        if reader.input.read(&mut [0])? != 0 {
            return Err(TableFileError::Invalid("bytes after the end"));
        }
        ReferenceTables::from_parts(tables, baselines, num_answers)
            .ok_or(TableFileError::Invalid("inconsistent sources"))
    }
}

/// The bytes of plain values.
fn as_bytes<T: Plain>(values: &[T]) -> &[u8] {
    // SAFETY: `Plain` types have no padding: every byte is initialised.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), std::mem::size_of_val(values)) }
}

fn as_bytes_mut<T: Plain>(values: &mut [T]) -> &mut [u8] {
    // SAFETY: every bit pattern is a valid value of a `Plain` type.
    unsafe {
        std::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), std::mem::size_of_val(values))
    }
}

/// Types whose memory is their bytes: no padding, every bit pattern valid.
trait Plain: Copy {}
impl Plain for u32 {}
/// Two u64 (`repr(C)`, 16 bytes).
impl Plain for Slot {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_texts::random_texts;
    use crate::pfgen::reference::Source;

    fn tables() -> (ReferenceTables, Vec<String>) {
        let p = random_texts("あいうえおか漢字😀ab", 300, 60, 7);
        let s = random_texts("あいうえおか漢字😀ab", 200, 90, 8);
        let sources = [
            Source {
                key: "P",
                answers: &p,
            },
            Source {
                key: "S",
                answers: &s,
            },
        ];
        let answers = random_texts("あいうえおか漢字😀ab", 50, 120, 9);
        (ReferenceTables::build(&sources).unwrap(), answers)
    }

    #[test]
    fn tables_read_back_score_alike() {
        let (built, answers) = tables();
        let mut file = Vec::new();
        built.write_to(&mut file).unwrap();
        let read = ReferenceTables::read_from(file.as_slice(), file.len() as u64).unwrap();
        assert_eq!(read.baselines(), built.baselines());
        assert_eq!(read.memory_bytes(), built.memory_bytes());
        let answers: Vec<Vec<char>> = answers.iter().map(|a| a.chars().collect()).collect();
        assert_eq!(scores(&read, &answers), scores(&built, &answers));
    }

    fn scores(tables: &ReferenceTables, answers: &[Vec<char>]) -> Vec<f64> {
        let mut scratch = crate::pfgen::reference::Scratch::default();
        let k = tables.num_sources();
        let mut all = Vec::new();
        for answer in answers {
            let mut fluency = vec![0.0; k];
            let mut truthfulness = vec![0.0; k];
            tables.score_answers(&[answer], &mut scratch, &mut fluency, &mut truthfulness);
            all.extend(fluency);
            all.extend(truthfulness);
        }
        all
    }

    #[test]
    fn damaged_files_are_refused() {
        let (built, _) = tables();
        let mut file = Vec::new();
        built.write_to(&mut file).unwrap();
        let invalid = |bytes: &[u8]| {
            matches!(
                ReferenceTables::read_from(bytes, bytes.len() as u64),
                Err(TableFileError::Invalid(_))
            )
        };
        assert!(invalid(&file[..file.len() - 1]));
        assert!(invalid(&file[..file.len() / 2]));
        assert!(invalid(&[file.as_slice(), &[0]].concat()));
        assert!(invalid(b""));
        // A table's size, in the header: refused before it is allocated.
        let mut huge = file.clone();
        let first_table_slots = 8 + 8 + 2 * 8 * built.num_sources() + 8 + 3 * 8;
        huge[first_table_slots..first_table_slots + 8].copy_from_slice(&u64::MAX.to_ne_bytes());
        assert!(invalid(&huge));
        huge[first_table_slots..first_table_slots + 8].copy_from_slice(&(1u64 << 40).to_ne_bytes());
        assert!(invalid(&huge));
        for at in [0, 9, 100, file.len() / 2, file.len() - 9] {
            let mut damaged = file.clone();
            damaged[at] ^= 0x10;
            assert!(invalid(&damaged), "byte {at}");
        }
    }
}
