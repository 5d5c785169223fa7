//! The rare n-gram filter of reference-set construction: which candidates contain a character
//! n-gram that fewer than `min_count` candidates contain. Exact, in bounded memory, for tens of
//! millions of candidates.
//!
//! The scheme:
//! * An n-gram (n <= 5 code points, 21 bits each) is a 105-bit integer `key`. It is mixed by a
//!   multiplication with an odd constant modulo 2^105, a bijection, so `mixed` identifies the
//!   n-gram as exactly as `key` does, and its top bits depend on every character.
//! * The top `PARTITION_BITS` bits of `mixed` choose one of 512 partitions. Inside a partition
//!   those bits are all equal, so the other 96 bits still identify the n-gram exactly: each
//!   occurrence is stored as one u128, `(low 96 bits of mixed) << 32 | candidate index`.
//! * Occurrences collect in per-partition buffers. When the buffers reach the memory budget,
//!   each is compacted: sorted, so that the occurrences of an n-gram form a run with their
//!   candidate indices in order, and each run is replaced by its distinct candidate indices,
//!   or, once it has `min_count` of them, by one entry whose index is `SATURATED` ("seen in
//!   enough candidates"). Common n-grams thus shrink to one entry each. If the compacted
//!   buffers still fill more than half the budget, they are appended to one spill file per
//!   partition. The candidates' texts go to a text file.
//! * `finish` takes each partition alone (file + buffer), compacts it the same way (merging
//!   is the same operation: a saturated entry counts as `min_count` candidates), and every run
//!   left unsaturated is an n-gram contained in fewer than `min_count` candidates (document
//!   frequency, not occurrences): its candidates are rare.
//!
//! No sketch, no hash collisions: every n-gram is compared by its full value. Memory is the
//! budget plus one partition per thread, whatever the number of candidates; disk holds at most
//! 16 bytes per n-gram occurrence plus the texts, and far less when n-grams repeat.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

/// The longest n-gram: 5 code points of 21 bits fill 105 bits, and 105 - PARTITION_BITS = 96
/// bits of n-gram plus 32 bits of candidate index fill a u128.
pub const MAX_N: usize = 5;
const KEY_BITS: u32 = 105;
const PARTITION_BITS: u32 = 9;
const NUM_PARTITIONS: usize = 1 << PARTITION_BITS;
const STORED_BITS: u32 = KEY_BITS - PARTITION_BITS;
const KEY_MASK: u128 = (1u128 << KEY_BITS) - 1;
const STORED_MASK: u128 = (1u128 << STORED_BITS) - 1;
/// Odd, so that multiplying by it modulo 2^105 is invertible; its bits are those of the golden
/// ratio, a classic multiplicative-hashing constant.
const MIX: u128 = 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_u128 & KEY_MASK | 1;
const ENTRY_BYTES: usize = 16;
/// The candidate index of an entry standing for `min_count` candidates (so no candidate has it).
const SATURATED: u32 = u32::MAX;
const IO_BUFFER: usize = 1 << 20;
/// Texts are appended to the text file in blocks of this size.
const TEXT_BLOCK: usize = 16 << 20;

/// What the counting saw, for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RareNgramStats {
    /// n-gram occurrences counted (all positions of all candidates).
    pub occurrences: u64,
    /// Distinct n-grams.
    pub distinct: u64,
    /// Distinct n-grams contained in fewer than `min_count` candidates.
    pub rare: u64,
    /// Bytes written to spill files.
    pub spilled_bytes: u64,
}

/// The outcome: per candidate, in the order added, whether it holds a rare n-gram, and its
/// length in code points.
pub struct RareNgramResult {
    pub rare: Vec<bool>,
    pub lengths: Vec<u32>,
    pub stats: RareNgramStats,
}

#[derive(Debug)]
pub enum RareNgramError {
    InvalidN(usize),
    TooManyCandidates,
    Io(PathBuf, io::Error),
}

impl std::fmt::Display for RareNgramError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RareNgramError::InvalidN(n) => write!(f, "n must be between 1 and {MAX_N}, got {n}"),
            RareNgramError::TooManyCandidates => {
                write!(f, "more than {} candidates for one question", u32::MAX)
            }
            RareNgramError::Io(path, error) => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for RareNgramError {}

/// Counts the n-grams of candidates added in batches; see the module documentation.
pub struct RareNgramCounter {
    n: usize,
    min_count: u32,
    dir: PathBuf,
    /// Occurrences buffered before the buffers are spilled.
    buffer_limit: usize,
    buckets: Vec<Vec<u128>>,
    buffered: usize,
    /// Texts not yet spilled, and the offset of every candidate's text in the text file.
    text_buffer: Vec<u8>,
    text_offsets: Vec<u64>,
    text_bytes: u64,
    lengths: Vec<u32>,
    stats: RareNgramStats,
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> RareNgramError + '_ {
    move |error| RareNgramError::Io(path.to_path_buf(), error)
}

impl RareNgramCounter {
    /// A counter of n-grams, marking those found in fewer than `min_count` candidates, spilling
    /// into `dir` (an existing, empty directory that the caller removes afterwards) when more
    /// than `memory_budget` bytes of occurrences stay buffered.
    pub fn new(
        n: usize,
        min_count: u32,
        dir: &Path,
        memory_budget: usize,
    ) -> Result<Self, RareNgramError> {
        if n == 0 || n > MAX_N {
            return Err(RareNgramError::InvalidN(n));
        }
        Ok(RareNgramCounter {
            n,
            min_count,
            dir: dir.to_path_buf(),
            buffer_limit: (memory_budget / ENTRY_BYTES).max(NUM_PARTITIONS),
            buckets: vec![Vec::new(); NUM_PARTITIONS],
            buffered: 0,
            text_buffer: Vec::new(),
            text_offsets: vec![0],
            text_bytes: 0,
            lengths: Vec::new(),
            stats: RareNgramStats::default(),
        })
    }

    pub fn num_candidates(&self) -> usize {
        self.lengths.len()
    }

    /// Adds candidates (their indices continue those already added).
    pub fn add<S: AsRef<str>>(&mut self, candidates: &[S]) -> Result<(), RareNgramError> {
        let mut chars = Vec::new();
        for candidate in candidates {
            let text = candidate.as_ref();
            let index = u32::try_from(self.lengths.len())
                .ok()
                .filter(|&index| index != SATURATED)
                .ok_or(RareNgramError::TooManyCandidates)?;
            chars.clear();
            chars.extend(text.chars().map(|c| c as u128));
            self.lengths
                .push(u32::try_from(chars.len()).unwrap_or(u32::MAX));
            for window in chars.windows(self.n) {
                let key = window.iter().fold(0u128, |key, &c| (key << 21) | c);
                let mixed = key.wrapping_mul(MIX) & KEY_MASK;
                let partition = (mixed >> STORED_BITS) as usize;
                self.buckets[partition].push(((mixed & STORED_MASK) << 32) | u128::from(index));
            }
            let occurrences = chars.len().saturating_sub(self.n - 1);
            self.buffered += occurrences;
            self.stats.occurrences += occurrences as u64;
            self.text_buffer.extend_from_slice(text.as_bytes());
            self.text_bytes += text.len() as u64;
            self.text_offsets.push(self.text_bytes);
            if self.text_buffer.len() >= TEXT_BLOCK {
                self.spill_texts()?;
            }
            if self.buffered >= self.buffer_limit {
                self.compact()?;
            }
        }
        Ok(())
    }

    fn partition_path(&self, partition: usize) -> PathBuf {
        self.dir.join(format!("ngrams-{partition:03}.bin"))
    }

    fn text_path(&self) -> PathBuf {
        self.dir.join("texts.bin")
    }

    fn append(path: &Path, bytes: impl Iterator<Item = [u8; ENTRY_BYTES]>) -> io::Result<u64> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let mut out = BufWriter::with_capacity(IO_BUFFER, file);
        let mut written = 0;
        for entry in bytes {
            out.write_all(&entry)?;
            written += ENTRY_BYTES as u64;
        }
        out.flush()?;
        Ok(written)
    }

    /// Compacts the buffers; spills them if they stay over half the budget.
    fn compact(&mut self) -> Result<(), RareNgramError> {
        let min_count = self.min_count;
        self.buckets
            .par_iter_mut()
            .for_each(|bucket| compact(bucket, min_count));
        self.buffered = self.buckets.iter().map(Vec::len).sum();
        if self.buffered > self.buffer_limit / 2 {
            self.spill()?;
        }
        Ok(())
    }

    /// Memory held by buffered occurrences (what `spill` frees).
    pub fn buffered_bytes(&self) -> usize {
        self.buffered * ENTRY_BYTES
    }

    /// Appends the buffered occurrences and texts to the spill files and frees the buffers.
    pub fn spill(&mut self) -> Result<(), RareNgramError> {
        for partition in 0..NUM_PARTITIONS {
            if self.buckets[partition].is_empty() {
                continue;
            }
            let path = self.partition_path(partition);
            let entries = self.buckets[partition].iter().map(|e| e.to_le_bytes());
            self.stats.spilled_bytes += Self::append(&path, entries).map_err(io_error(&path))?;
            self.buckets[partition] = Vec::new();
        }
        self.buffered = 0;
        self.spill_texts()
    }

    fn spill_texts(&mut self) -> Result<(), RareNgramError> {
        let path = self.text_path();
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io_error(&path))?;
        file.write_all(&self.text_buffer).map_err(io_error(&path))?;
        self.stats.spilled_bytes += self.text_buffer.len() as u64;
        self.text_buffer.clear();
        Ok(())
    }

    /// Counts every partition and marks the candidates holding an n-gram that fewer than
    /// `min_count` candidates contain. Texts stay readable with `texts`.
    pub fn finish(&mut self) -> Result<RareNgramResult, RareNgramError> {
        let min_count = self.min_count;
        self.spill_texts()?;
        let buckets = std::mem::replace(&mut self.buckets, vec![Vec::new(); NUM_PARTITIONS]);
        self.buffered = 0;
        let counted = buckets
            .into_par_iter()
            .enumerate()
            .map(|(partition, bucket)| {
                let path = self.partition_path(partition);
                let entries = read_partition(&path, bucket).map_err(io_error(&path))?;
                Ok(count_partition(entries, min_count))
            })
            .collect::<Result<Vec<_>, RareNgramError>>()?;
        let mut rare = vec![false; self.lengths.len()];
        for partition in counted {
            self.stats.distinct += partition.distinct;
            self.stats.rare += partition.rare;
            for index in partition.rare_candidates {
                rare[index as usize] = true;
            }
        }
        Ok(RareNgramResult {
            rare,
            lengths: self.lengths.clone(),
            stats: self.stats.clone(),
        })
    }

    /// The texts of candidates `indices` (in that order), read back from the text file.
    pub fn texts(&self, indices: &[usize]) -> Result<Vec<String>, RareNgramError> {
        let path = self.text_path();
        let mut file = File::open(&path).map_err(io_error(&path))?;
        let mut order: Vec<usize> = (0..indices.len()).collect();
        order.sort_by_key(|&i| indices[i]);
        let mut texts = vec![String::new(); indices.len()];
        for position in order {
            let index = indices[position];
            let (Some(&start), Some(&end)) = (
                self.text_offsets.get(index),
                self.text_offsets.get(index + 1),
            ) else {
                let error = io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("no candidate {index} (there are {})", self.lengths.len()),
                );
                return Err(RareNgramError::Io(path, error));
            };
            let mut bytes = vec![0; (end - start) as usize];
            file.seek(SeekFrom::Start(start))
                .and_then(|_| file.read_exact(&mut bytes))
                .map_err(io_error(&path))?;
            texts[position] = String::from_utf8(bytes).map_err(|_| {
                let error = io::Error::new(io::ErrorKind::InvalidData, "corrupt text file");
                RareNgramError::Io(path.clone(), error)
            })?;
        }
        Ok(texts)
    }
}

/// A partition's spilled occurrences (if any) followed by its buffered ones.
fn read_partition(path: &Path, mut buffered: Vec<u128>) -> io::Result<Vec<u128>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(buffered),
        Err(error) => return Err(error),
    };
    let spilled = file.metadata()?.len() as usize / ENTRY_BYTES;
    let mut entries = Vec::with_capacity(spilled + buffered.len());
    let mut reader = BufReader::with_capacity(IO_BUFFER, file);
    let mut entry = [0u8; ENTRY_BYTES];
    for _ in 0..spilled {
        reader.read_exact(&mut entry)?;
        entries.push(u128::from_le_bytes(entry));
    }
    entries.append(&mut buffered);
    Ok(entries)
}

struct PartitionCount {
    distinct: u64,
    rare: u64,
    rare_candidates: Vec<u32>,
}

/// Sorts `entries` and shrinks each run of one n-gram to its distinct candidate indices, or to
/// a single SATURATED entry once they reach `min_count` (a SATURATED entry counts as
/// `min_count`). Compacting twice, or compacting concatenated compacted parts, gives the same
/// result as compacting all occurrences at once.
fn compact(entries: &mut Vec<u128>, min_count: u32) {
    entries.sort_unstable();
    let mut kept = 0;
    let mut start = 0;
    while start < entries.len() {
        let ngram = entries[start] >> 32;
        let mut end = start;
        while end < entries.len() && entries[end] >> 32 == ngram {
            end += 1;
        }
        // Sorted: a SATURATED entry is last in its run, and equal indices are adjacent.
        let saturated = entries[end - 1] as u32 == SATURATED;
        let mut distinct = 0u32;
        for i in start..end {
            if i == start || entries[i] != entries[i - 1] {
                distinct = distinct.saturating_add(1);
            }
        }
        if saturated || distinct >= min_count {
            entries[kept] = (ngram << 32) | u128::from(SATURATED);
            kept += 1;
        } else {
            for i in start..end {
                if i == start || entries[i] != entries[i - 1] {
                    entries[kept] = entries[i];
                    kept += 1;
                }
            }
        }
        start = end;
    }
    entries.truncate(kept);
}

fn count_partition(mut entries: Vec<u128>, min_count: u32) -> PartitionCount {
    compact(&mut entries, min_count);
    let mut count = PartitionCount {
        distinct: 0,
        rare: 0,
        rare_candidates: Vec::new(),
    };
    let mut start = 0;
    while start < entries.len() {
        let ngram = entries[start] >> 32;
        let mut end = start + 1;
        while end < entries.len() && entries[end] >> 32 == ngram {
            end += 1;
        }
        count.distinct += 1;
        if entries[start] as u32 != SATURATED {
            count.rare += 1;
            count
                .rare_candidates
                .extend(entries[start..end].iter().map(|&e| e as u32));
        }
        start = end;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!(
                "pfgen-rare-{name}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("temporary directory");
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// The definition, directly: document frequencies in a hash map.
    fn naive(candidates: &[String], n: usize, min_count: u32) -> Vec<bool> {
        let grams = |text: &str| -> HashSet<Vec<char>> {
            let chars: Vec<char> = text.chars().collect();
            chars.windows(n).map(|w| w.to_vec()).collect()
        };
        let mut df: HashMap<Vec<char>, u32> = HashMap::new();
        for candidate in candidates {
            for gram in grams(candidate) {
                *df.entry(gram).or_default() += 1;
            }
        }
        candidates
            .iter()
            .map(|c| grams(c).iter().any(|g| df[g] < min_count))
            .collect()
    }

    fn run(candidates: &[String], n: usize, min_count: u32, budget: usize) -> RareNgramResult {
        let dir = TempDir::new(&format!("{n}-{min_count}-{budget}"));
        let mut counter = RareNgramCounter::new(n, min_count, &dir.0, budget).expect("counter");
        for batch in candidates.chunks(7) {
            counter.add(batch).expect("add");
        }
        let result = counter.finish().expect("finish");
        let all: Vec<usize> = (0..candidates.len()).rev().collect();
        let texts = counter.texts(&all).expect("texts");
        let expected: Vec<String> = candidates.iter().rev().cloned().collect();
        assert_eq!(texts, expected);
        result
    }

    /// Deterministic pseudo-random candidates over a small alphabet, with repeats.
    fn candidates(count: usize) -> Vec<String> {
        let alphabet: Vec<char> = "あいうえおかきくけこ漢字😀ab".chars().collect();
        let mut state = 12345u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        (0..count)
            .map(|_| {
                let length = next() % 12;
                (0..length)
                    .map(|_| alphabet[(next() % 4).min(next() % alphabet.len())])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn matches_the_definition_in_memory_and_spilled() {
        let candidates = candidates(400);
        for n in 1..=MAX_N {
            for min_count in [1, 2, 3] {
                let expected = naive(&candidates, n, min_count);
                // Budgets: compact and spill at every candidate, compact only, never.
                for budget in [0, 1000 * ENTRY_BYTES, 1 << 30] {
                    let result = run(&candidates, n, min_count, budget);
                    assert_eq!(result.rare, expected, "n={n} min_count={min_count}");
                }
            }
        }
    }

    #[test]
    fn counts_documents_not_occurrences() {
        // "ababab" holds "ab" three times but is one document: "ab" is rare at min_count 2.
        let candidates = vec!["ababab".to_string(), "xyz".to_string(), "xyz".to_string()];
        let result = run(&candidates, 2, 2, 1 << 20);
        assert_eq!(result.rare, vec![true, false, false]);
        assert_eq!(result.lengths, vec![6, 3, 3]);
        assert_eq!(result.stats.occurrences, 5 + 2 + 2);
        assert_eq!(result.stats.distinct, 4);
        assert_eq!(result.stats.rare, 2);
    }

    #[test]
    fn short_candidates_and_extreme_code_points() {
        let candidates = vec![
            "\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}".to_string(),
            "\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}".to_string(),
            "\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFE}".to_string(),
            "abc".to_string(),
            String::new(),
        ];
        let result = run(&candidates, 5, 2, 0);
        assert_eq!(result.rare, vec![false, false, true, false, false]);
    }

    #[test]
    fn mixing_is_a_bijection_on_distinct_keys() {
        // Keys that differ only in high bits must land on different stored values.
        let a = (0x10FFFFu128 << 84) | 1;
        let b = 1u128;
        let mix = |key: u128| key.wrapping_mul(MIX) & KEY_MASK;
        assert_ne!(mix(a), mix(b));
        assert_eq!(MIX & 1, 1);
    }

    #[test]
    fn rejects_bad_n() {
        let dir = TempDir::new("bad-n");
        assert!(matches!(
            RareNgramCounter::new(0, 2, &dir.0, 0),
            Err(RareNgramError::InvalidN(0))
        ));
        assert!(matches!(
            RareNgramCounter::new(6, 2, &dir.0, 0),
            Err(RareNgramError::InvalidN(6))
        ));
    }

    #[test]
    fn unwritable_spill_directory_is_an_error() {
        let dir = TempDir::new("gone");
        let missing = dir.0.join("missing");
        let mut counter = RareNgramCounter::new(2, 2, &missing, 0).expect("counter");
        counter.add(&["abcdef"]).expect("buffered");
        let error = counter.finish().err().expect("spill must fail");
        assert!(error.to_string().contains("missing"), "{error}");
    }
}
