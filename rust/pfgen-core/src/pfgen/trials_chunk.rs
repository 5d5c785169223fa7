//! The `eval` command's reading and scoring of a chunk of runs, without an object per answer:
//! each trials file is read and hashed (its input hash, the SHA-1 of its bytes as stored), and
//! unless that hash is the one its current result already has, decompressed (`.xz` or plain
//! JSON lines), cut into lines and read with the `score` command's line reader, its answers
//! grouped by question (file order kept), the files in parallel. Each question is then scored
//! over the whole chunk in one batch, its tables hot, and its scores and records kept here for
//! the runs' results.
//!
//! A run whose lines all carry the runners' `generated` mark (`true`, or `false` for an answer
//! the runner gave up on) is "marked": only its generated answers are grouped and scored, and
//! the number of answers given up is kept per question.
//!
//! A run with anything this reader is not sure about (an empty or odd file, a line it does not
//! take, such as one whose `generated` is not a bare `true` or `false`, marked and unmarked
//! lines together, a question not in the data, a carriage return that is not part of a line
//! break) is marked `Careful`: the caller reads it its own way, from the bytes kept here, which
//! words the error or takes the line.

use std::collections::HashMap;
use std::fmt::Write;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use liblzma::stream::{Action, Status, Stream};
use rayon::prelude::*;
use sha1::{Digest, Sha1};

use crate::common::py_sum::SumMode;
use crate::pfgen::answer_lines::{read_marked_answer_lines, AnswerLines, BLANK};
use crate::pfgen::run_summary::{question_stats, run_stats, QuestionStats, RunStats, ScoreColumns};
use crate::pfgen::QuestionScorer;

/// One trials file: where it is, whether it is `.xz`-compressed, and the input hash of its
/// result when that result is current in every other way (`current_hash`): a file with that
/// hash is only read and hashed.
#[derive(Clone, Copy)]
pub struct TrialsFile<'a> {
    pub path: &'a Path,
    pub compressed: bool,
    pub current_hash: Option<&'a str>,
}

/// Why a run is left to the caller's own reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Careful {
    /// No answer line (an empty file, or only blank lines).
    NoAnswers,
    /// Not a single complete `.xz` stream (invalid, truncated, or followed by more bytes).
    NotOneXzStream,
    /// A carriage return not followed by a line feed: a line break for Python's `splitlines`.
    CarriageReturn,
    /// A line the answer-line reader does not take.
    OddLine,
    /// A question that is not one of the data's.
    UnknownQuestion,
}

/// A request about a run, a question or an answer the chunk does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkError {
    NoRun(usize),
    NoQuestion(usize),
    /// Run, question, index: no such answer of the run to the question.
    NoAnswer(usize, usize, usize),
    /// Run, question: not scored (yet), or the run was not among the runs scored.
    NotScored(usize, usize),
    AlreadyScored(usize),
}

impl std::fmt::Display for ChunkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkError::NoRun(run) => write!(f, "no run {run} read in this chunk"),
            ChunkError::NoQuestion(question) => write!(f, "no question {question}"),
            ChunkError::NoAnswer(run, question, index) => {
                write!(f, "run {run} has no answer {index} to question {question}")
            }
            ChunkError::NotScored(run, question) => {
                write!(f, "question {question} is not scored for run {run}")
            }
            ChunkError::AlreadyScored(question) => write!(f, "question {question} is scored"),
        }
    }
}

impl std::error::Error for ChunkError {}

/// A run read: its decompressed text, its lines, and its lines of each question.
struct RunLines {
    text: Vec<u8>,
    lines: AnswerLines,
    /// Per question of the data (in the chunk's order): its lines, in file order (of a marked
    /// run, the generated ones).
    by_question: Vec<Vec<u32>>,
    /// Whether its lines carry the `generated` mark.
    marked: bool,
    /// Per question of the data: its answers the runner gave up on (of a marked run).
    given_up: Vec<usize>,
}

/// The scores of one question's answers over the runs of a chunk, in run order, then file
/// order; arrays as `ScoreBatch` (row-major per source), `lengths` in characters.
pub struct QuestionScores {
    /// The runs scored, in order, and where each one's answers start (`starts[i]..starts[i+1]`).
    runs: Vec<usize>,
    starts: Vec<usize>,
    pub num_sources: usize,
    pub fluency: Vec<f64>,
    pub truthfulness: Vec<f64>,
    pub helpfulness: Vec<f64>,
    pub average: Vec<f64>,
    pub lengths: Vec<f64>,
    /// Each answer's record as JSON text (`record_json` layout).
    pub records: Vec<String>,
}

impl QuestionScores {
    /// The answers of `run` in this question's arrays (None if the run was not scored).
    pub fn span(&self, run: usize) -> Option<Range<usize>> {
        let index = self.runs.iter().position(|&scored| scored == run)?;
        Some(self.starts[index]..self.starts[index + 1])
    }
}

/// A run of a chunk: its lines, or why they were not read.
enum Run {
    Read {
        input_hash: String,
        lines: RunLines,
    },
    /// Its hash is its current result's.
    Current,
    /// Left to the caller, with the file's bytes as stored.
    Careful {
        input_hash: String,
        why: Careful,
        bytes: Vec<u8>,
    },
    /// The file could not be read: the system's error number.
    Unreadable(i32),
}

/// The runs of a chunk, read, and the scores of each question once scored.
pub struct TrialsChunk {
    runs: Vec<Run>,
    scores: Vec<OnceLock<QuestionScores>>,
}

impl TrialsChunk {
    /// Reads and hashes every file, and reads the lines of those not current (in parallel);
    /// `questions` are the data's question texts.
    pub fn read(files: &[TrialsFile<'_>], questions: &[String]) -> TrialsChunk {
        let index: HashMap<&str, usize> = questions
            .iter()
            .enumerate()
            .map(|(number, text)| (text.as_str(), number))
            .collect();
        let runs = files
            .par_iter()
            .map(|file| read_file(*file, &index))
            .collect();
        TrialsChunk {
            runs,
            scores: questions.iter().map(|_| OnceLock::new()).collect(),
        }
    }

    pub fn num_runs(&self) -> usize {
        self.runs.len()
    }

    /// The input hash of `run` (hexadecimal SHA-1 of its file), unless it is current or its
    /// file could not be read.
    pub fn input_hash(&self, run: usize) -> Option<&str> {
        match self.runs.get(run)? {
            Run::Read { input_hash, .. } | Run::Careful { input_hash, .. } => Some(input_hash),
            Run::Current | Run::Unreadable(_) => None,
        }
    }

    /// Whether `run`'s file has its current result's input hash.
    pub fn is_current(&self, run: usize) -> bool {
        matches!(self.runs.get(run), Some(Run::Current))
    }

    /// The system's error number if `run`'s file could not be read.
    pub fn read_error(&self, run: usize) -> Option<i32> {
        match self.runs.get(run)? {
            Run::Unreadable(errno) => Some(*errno),
            _ => None,
        }
    }

    /// Why `run` is left to the caller, and its file's bytes as stored, if it is.
    pub fn careful(&self, run: usize) -> Option<(Careful, &[u8])> {
        match self.runs.get(run)? {
            Run::Careful { why, bytes, .. } => Some((*why, bytes)),
            _ => None,
        }
    }

    fn run(&self, run: usize) -> Option<&RunLines> {
        match self.runs.get(run)? {
            Run::Read { lines, .. } => Some(lines),
            _ => None,
        }
    }

    fn run_lines(&self, run: usize) -> Result<&RunLines, ChunkError> {
        self.run(run).ok_or(ChunkError::NoRun(run))
    }

    /// The number of answers of `runs` to `question`.
    pub fn num_answers(&self, question: usize, runs: &[usize]) -> usize {
        runs.iter()
            .filter_map(|&run| self.run(run)?.by_question.get(question))
            .map(Vec::len)
            .sum()
    }

    /// The number of answers of `run` to each question (of a marked run, the generated ones;
    /// empty for a run left to the caller).
    pub fn counts(&self, run: usize) -> Vec<usize> {
        self.run(run)
            .map(|read| read.by_question.iter().map(Vec::len).collect())
            .unwrap_or_default()
    }

    /// Whether the lines of `run` carry the `generated` mark (false for a run not read).
    pub fn is_marked(&self, run: usize) -> bool {
        self.run(run).is_some_and(|read| read.marked)
    }

    /// The number of answers of `run` the runner gave up on, per question (not among
    /// `counts`; empty for a run not read).
    pub fn given_up(&self, run: usize) -> Vec<usize> {
        self.run(run)
            .map(|read| read.given_up.clone())
            .unwrap_or_default()
    }

    /// The answers of `runs` to `question`, in run order, then file order.
    pub fn answers(&self, question: usize, runs: &[usize]) -> Vec<&str> {
        runs.iter()
            .filter_map(|&run| self.run(run))
            .flat_map(|read| {
                let lines = read
                    .by_question
                    .get(question)
                    .map_or(&[][..], Vec::as_slice);
                lines.iter().map(move |&line| {
                    read.lines
                        .answer(&read.text, line as usize)
                        .unwrap_or_default()
                })
            })
            .collect()
    }

    /// Line `index` (in file order) of `run`'s answers to `question`, without its line break.
    pub fn line(&self, run: usize, question: usize, index: usize) -> Result<&[u8], ChunkError> {
        let read = self.run_lines(run)?;
        let lines = read
            .by_question
            .get(question)
            .ok_or(ChunkError::NoQuestion(question))?;
        let line = *lines
            .get(index)
            .ok_or(ChunkError::NoAnswer(run, question, index))?;
        let (start, end) = read.lines.ranges[line as usize];
        Ok(&read.text[start..end])
    }

    /// The record (JSON text) of `run`'s answer `index` (file order) to `question`, once scored.
    pub fn record(&self, run: usize, question: usize, index: usize) -> Result<&str, ChunkError> {
        let (scores, span) = self.run_scores(run, question)?;
        scores.records[span]
            .get(index)
            .map(String::as_str)
            .ok_or(ChunkError::NoAnswer(run, question, index))
    }

    /// The scores of `run`'s answers to `question`: the question's scores over the chunk, and
    /// where the run's answers are in them.
    pub fn run_scores(
        &self,
        run: usize,
        question: usize,
    ) -> Result<(&QuestionScores, Range<usize>), ChunkError> {
        let scores = self
            .scores
            .get(question)
            .ok_or(ChunkError::NoQuestion(question))?
            .get()
            .ok_or(ChunkError::NotScored(run, question))?;
        let span = scores
            .span(run)
            .ok_or(ChunkError::NotScored(run, question))?;
        Ok((scores, span))
    }

    /// Scores the answers of `runs` to `question` in one batch and keeps the scores (runs
    /// left to the caller, and runs without an answer to the question, are passed over).
    /// `external` and `sum` as for `QuestionScorer::score_batch`; `sources` are the records'
    /// keys.
    pub fn score_question(
        &self,
        question: usize,
        runs: &[usize],
        scorer: &QuestionScorer,
        sources: &[String],
        external: &[u32],
        sum: SumMode,
    ) -> Result<(), ChunkError> {
        let slot = self
            .scores
            .get(question)
            .ok_or(ChunkError::NoQuestion(question))?;
        if slot.get().is_some() {
            return Err(ChunkError::AlreadyScored(question));
        }
        let mut characters: Vec<char> = Vec::new();
        let mut ends = Vec::new();
        let mut starts = vec![0];
        let mut scored = Vec::new();
        for &run in runs {
            let Some(read) = self.run(run) else {
                continue;
            };
            let lines = &read.by_question[question];
            if lines.is_empty() {
                continue;
            }
            for &line in lines {
                let answer = read.lines.answer(&read.text, line as usize);
                characters.extend(answer.unwrap_or_default().chars());
                ends.push(characters.len());
            }
            scored.push(run);
            starts.push(ends.len());
        }
        let mut answers: Vec<&[char]> = Vec::with_capacity(ends.len());
        let mut start = 0;
        for &end in &ends {
            answers.push(&characters[start..end]);
            start = end;
        }
        let lengths = answers.iter().map(|answer| answer.len() as f64).collect();
        let batch = scorer.score_batch(&answers, external, true, sum);
        let records = batch.records_json(sources);
        slot.set(QuestionScores {
            runs: scored,
            starts,
            num_sources: batch.num_sources,
            fluency: batch.fluency,
            truthfulness: batch.truthfulness,
            helpfulness: batch.helpfulness,
            average: batch.average,
            lengths,
            records,
        })
        .map_err(|_| ChunkError::AlreadyScored(question))
    }

    /// The scores of `run`'s answers to `question`, as columns.
    fn columns(&self, run: usize, question: usize) -> Result<ScoreColumns<'_>, ChunkError> {
        let (scores, span) = self.run_scores(run, question)?;
        let k = scores.num_sources;
        Ok(ScoreColumns {
            num_sources: k,
            fluency: &scores.fluency[span.start * k..span.end * k],
            truthfulness: &scores.truthfulness[span.start * k..span.end * k],
            helpfulness: &scores.helpfulness[span.clone()],
            average: &scores.average[span.clone()],
            lengths: &scores.lengths[span],
        })
    }

    /// The result.json numbers of `run`'s answers to `question`.
    pub fn question_stats(
        &self,
        run: usize,
        question: usize,
        sum: SumMode,
    ) -> Result<QuestionStats, ChunkError> {
        Ok(question_stats(&self.columns(run, question)?, sum))
    }

    /// The top-level result.json numbers of `run`, over `questions` in result.json's order.
    pub fn run_stats(
        &self,
        run: usize,
        questions: &[usize],
        sum: SumMode,
    ) -> Result<RunStats, ChunkError> {
        let columns = questions
            .iter()
            .map(|&question| self.columns(run, question))
            .collect::<Result<Vec<_>, _>>()?;
        let averages: Vec<&[f64]> = columns.iter().map(|c| c.average).collect();
        let lengths: Vec<&[f64]> = columns.iter().map(|c| c.lengths).collect();
        Ok(run_stats(&averages, &lengths, sum))
    }

    /// The scores of `question`, once scored.
    pub fn scores(&self, question: usize) -> Option<&QuestionScores> {
        self.scores.get(question)?.get()
    }

    /// The questions part of a run's score cache: `key:[record, ...]` of each question of
    /// `run` scored, in the order of `keys` (the questions' JSON-encoded ids, by question
    /// number; a question left out when its key is not given), joined by commas.
    pub fn cache_questions(&self, run: usize, keys: &[(usize, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for &(question, key) in keys {
            let Some(scores) = self.scores(question) else {
                continue;
            };
            let Some(span) = scores.span(run) else {
                continue;
            };
            if !out.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(key);
            out.extend_from_slice(b":[");
            for (index, record) in scores.records[span].iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(record.as_bytes());
            }
            out.push(b']');
        }
        out
    }
}

/// One file read, hashed and, unless current, its lines read and grouped.
fn read_file(file: TrialsFile<'_>, index: &HashMap<&str, usize>) -> Run {
    let bytes = match std::fs::read(file.path) {
        Ok(bytes) => bytes,
        // Reading fails with a system error; EIO stands for any other.
        Err(error) => return Run::Unreadable(error.raw_os_error().unwrap_or(libc::EIO)),
    };
    let input_hash = sha1_hex(&bytes);
    if file.current_hash == Some(input_hash.as_str()) {
        return Run::Current;
    }
    match read_run(bytes, file.compressed, index) {
        Ok(lines) => Run::Read { input_hash, lines },
        Err((why, bytes)) => Run::Careful {
            input_hash,
            why,
            bytes,
        },
    }
}

/// The SHA-1 of `bytes` in lowercase hexadecimal (`hashlib.sha1(bytes).hexdigest()`).
fn sha1_hex(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(40);
    for byte in Sha1::digest(bytes) {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// A file's lines read and grouped, or why it is left to the caller (with its bytes).
fn read_run(
    bytes: Vec<u8>,
    compressed: bool,
    index: &HashMap<&str, usize>,
) -> Result<RunLines, (Careful, Vec<u8>)> {
    if bytes.is_empty() {
        return Err((Careful::NoAnswers, bytes));
    }
    if !compressed {
        return run_lines(bytes, index);
    }
    match decompress_xz(&bytes) {
        Some(text) => run_lines(text, index).map_err(|(why, _)| (why, bytes)),
        None => Err((Careful::NotOneXzStream, bytes)),
    }
}

/// A text's lines read and grouped, or why not (with the text).
fn run_lines(text: Vec<u8>, index: &HashMap<&str, usize>) -> Result<RunLines, (Careful, Vec<u8>)> {
    match group_lines(&text, index) {
        Ok((lines, groups)) => Ok(RunLines {
            text,
            lines,
            by_question: groups.by_question,
            marked: groups.marked,
            given_up: groups.given_up,
        }),
        Err(why) => Err((why, text)),
    }
}

/// A run's lines of each question, as `RunLines` has them.
struct Groups {
    by_question: Vec<Vec<u32>>,
    marked: bool,
    given_up: Vec<usize>,
}

/// The answer lines of a text and the lines of each question, in file order.
fn group_lines(
    text: &[u8],
    index: &HashMap<&str, usize>,
) -> Result<(AnswerLines, Groups), Careful> {
    if has_lone_carriage_return(text) {
        return Err(Careful::CarriageReturn);
    }
    let lines = read_marked_answer_lines(text);
    let numbers = lines
        .questions
        .iter()
        .map(|question| index.get(question.as_str()).copied())
        .collect::<Option<Vec<usize>>>()
        .ok_or(Careful::UnknownQuestion)?;
    let mut groups = Groups {
        by_question: vec![Vec::new(); index.len()],
        marked: false,
        given_up: vec![0; index.len()],
    };
    let mut first_mark = None;
    for (line, &question) in lines.question_of_line.iter().enumerate() {
        if question == BLANK {
            continue;
        }
        let question = usize::try_from(question).map_err(|_| Careful::OddLine)?;
        let number = numbers[question];
        let mark = lines.generated[line];
        // A run's lines all carry the mark or none does; the caller words the line that differs.
        if *first_mark.get_or_insert(mark.is_some()) != mark.is_some() {
            return Err(Careful::OddLine);
        }
        if mark == Some(false) {
            groups.given_up[number] += 1;
        } else {
            let line = u32::try_from(line).map_err(|_| Careful::OddLine)?;
            groups.by_question[number].push(line);
        }
    }
    groups.marked = first_mark.ok_or(Careful::NoAnswers)?;
    Ok((lines, groups))
}

/// Whether `text` holds a carriage return that is not followed by a line feed (a line break
/// for Python's `bytes.splitlines`, where the line reader splits at line feeds only); one at
/// the very end ends the last line either way.
fn has_lone_carriage_return(text: &[u8]) -> bool {
    let Some(last) = text.len().checked_sub(1) else {
        return false;
    };
    text[..last]
        .iter()
        .enumerate()
        .any(|(at, &byte)| byte == b'\r' && text[at + 1] != b'\n')
}

/// The content of a single complete `.xz` stream that is the whole of `raw`, or None.
fn decompress_xz(raw: &[u8]) -> Option<Vec<u8>> {
    let mut stream = Stream::new_stream_decoder(u64::MAX, 0).ok()?;
    // Room for the whole content from the start (as the stream's index gives it, within
    // reason): the buffer is not reallocated, which would copy it, while it fills.
    let guess = raw.len().saturating_mul(8).max(1 << 16);
    let expected =
        xz_content_size(raw).map_or(guess, |size| size.min(raw.len().saturating_mul(1024)));
    let mut out = Vec::new();
    out.try_reserve_exact(expected.saturating_add(1)).ok()?;
    loop {
        let consumed = usize::try_from(stream.total_in()).ok()?;
        let before = (consumed, out.len());
        let status = stream
            .process_vec(raw.get(consumed..)?, &mut out, Action::Finish)
            .ok()?;
        if status == Status::StreamEnd {
            break;
        }
        if out.len() == out.capacity() {
            out.try_reserve(out.capacity()).ok()?;
        } else if before == (usize::try_from(stream.total_in()).ok()?, out.len()) {
            return None;
        }
    }
    (usize::try_from(stream.total_in()).ok()? == raw.len()).then_some(out)
}

/// The content size that the index of the `.xz` stream ending `raw` records (the sum of its
/// blocks' uncompressed sizes), if `raw` ends with a stream footer and an index that read
/// well. Only a size hint: the decoder checks the index itself.
fn xz_content_size(raw: &[u8]) -> Option<usize> {
    const FOOTER: usize = 12;
    let footer = raw.get(raw.len().checked_sub(FOOTER)?..)?;
    if &footer[10..] != b"YZ" {
        return None;
    }
    let backward = u32::from_le_bytes(footer[4..8].try_into().ok()?);
    let index_size = (usize::try_from(backward).ok()? + 1) * 4;
    let start = raw.len().checked_sub(FOOTER + index_size)?;
    let index = &raw[start..raw.len() - FOOTER];
    if index.first() != Some(&0) {
        return None;
    }
    let mut at = 1;
    let records = read_varint(index, &mut at)?;
    let mut total: u64 = 0;
    for _ in 0..records {
        read_varint(index, &mut at)?; // the block's unpadded size
        total = total.checked_add(read_varint(index, &mut at)?)?;
    }
    usize::try_from(total).ok()
}

/// An .xz variable-length integer (7 bits a byte, least significant first, at most 9 bytes).
fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value: u64 = 0;
    for shift in 0..9 {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << (7 * shift);
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_dir::TestDir;
    use crate::pfgen::helpfulness::WeightedRule;
    use crate::pfgen::reference::Source;

    fn compress(text: &[u8]) -> Vec<u8> {
        let mut stream = Stream::new_easy_encoder(6, liblzma::stream::Check::Crc64).unwrap();
        let mut out = Vec::with_capacity(text.len() + 1024);
        loop {
            let consumed = stream.total_in() as usize;
            let status = stream
                .process_vec(&text[consumed..], &mut out, Action::Finish)
                .unwrap();
            if status == Status::StreamEnd {
                return out;
            }
            out.reserve(out.capacity());
        }
    }

    fn questions() -> Vec<String> {
        vec!["Q one".to_string(), "Q two".to_string()]
    }

    /// Trials files written to a temporary directory.
    struct Files {
        dir: TestDir,
        files: Vec<(std::path::PathBuf, bool)>,
    }

    impl Files {
        /// `contents`: each file's bytes and whether it is compressed.
        fn new(name: &str, contents: &[(&[u8], bool)]) -> Files {
            let dir = TestDir::new(&format!("chunk-{name}"));
            let files = contents
                .iter()
                .enumerate()
                .map(|(number, &(bytes, compressed))| {
                    let path = dir.path().join(format!("trials{number}.jsonl"));
                    std::fs::write(&path, bytes).expect("a trials file");
                    (path, compressed)
                })
                .collect();
            Files { dir, files }
        }

        fn read(&self, current_hash: Option<&str>) -> TrialsChunk {
            let files: Vec<TrialsFile> = self
                .files
                .iter()
                .map(|(path, compressed)| TrialsFile {
                    path,
                    compressed: *compressed,
                    current_hash,
                })
                .collect();
            TrialsChunk::read(&files, &questions())
        }
    }

    const RUN: &str = concat!(
        "{\"question\": \"Q two\", \"answer\": \"b1\", \"id\": 1}\n",
        "\n",
        "{\"question\": \"Q one\", \"answer\": \"a\\u3042\"}\r\n",
        "{\"answer\": \"b2\", \"question\": \"Q two\"}\n",
    );

    #[test]
    fn reads_and_groups_compressed_and_plain_files() {
        let packed = compress(RUN.as_bytes());
        let files = Files::new("groups", &[(&packed, true), (RUN.as_bytes(), false)]);
        let chunk = files.read(None);
        assert_eq!(chunk.num_runs(), 2);
        for run in 0..2 {
            assert_eq!(chunk.careful(run), None);
            assert!(!chunk.is_current(run));
            assert_eq!(chunk.counts(run), vec![1, 2]);
            assert_eq!(
                chunk.line(run, 1, 1),
                Ok(&b"{\"answer\": \"b2\", \"question\": \"Q two\"}"[..])
            );
            assert_eq!(chunk.line(run, 1, 2), Err(ChunkError::NoAnswer(run, 1, 2)));
            assert_eq!(chunk.line(run, 2, 0), Err(ChunkError::NoQuestion(2)));
        }
        assert_eq!(chunk.answers(1, &[0, 1]), vec!["b1", "b2", "b1", "b2"]);
        assert_eq!(chunk.answers(0, &[1]), vec!["aあ"]);
    }

    #[test]
    fn reads_a_marked_run_without_its_given_up_answers() {
        let marked = concat!(
            "{\"question\": \"Q two\", \"answer\": \"\", \"generated\": false}\n",
            "{\"question\": \"Q two\", \"answer\": \"b1\", \"generated\": true}\n",
            "\n",
            "{\"generated\": true, \"question\": \"Q one\", \"answer\": \"a\"}\n",
            "{\"question\": \"Q two\", \"answer\": \"b2\", \"generated\": true}\n",
            "{\"question\": \"Q one\", \"answer\": \"x\", \"generated\": false}\n",
        );
        let all_given_up = "{\"question\": \"Q one\", \"answer\": \"\", \"generated\": false}\n";
        let runs = [
            (marked.as_bytes(), false),
            (all_given_up.as_bytes(), false),
            (RUN.as_bytes(), false),
        ];
        let chunk = Files::new("marked", &runs).read(None);
        assert_eq!(chunk.careful(0), None);
        assert!(chunk.is_marked(0));
        assert_eq!(chunk.counts(0), vec![1, 2]);
        assert_eq!(chunk.given_up(0), vec![1, 1]);
        assert_eq!(chunk.answers(1, &[0]), vec!["b1", "b2"]);
        assert_eq!(chunk.answers(0, &[0]), vec!["a"]);
        assert_eq!(
            chunk.line(0, 1, 0),
            Ok(&b"{\"question\": \"Q two\", \"answer\": \"b1\", \"generated\": true}"[..])
        );
        // Every answer given up: read, the caller words the error.
        assert_eq!(chunk.careful(1), None);
        assert!(chunk.is_marked(1));
        assert_eq!(chunk.counts(1), vec![0, 0]);
        assert_eq!(chunk.given_up(1), vec![1, 0]);
        assert!(!chunk.is_marked(2));
        assert_eq!(chunk.given_up(2), vec![0, 0]);
        assert!(!chunk.is_marked(3));
        assert!(chunk.given_up(3).is_empty());
    }

    #[test]
    fn hashes_each_file_and_skips_the_current_ones() {
        let packed = compress(RUN.as_bytes());
        let files = Files::new("hashes", &[(&packed, true), (b"", false)]);
        let chunk = files.read(None);
        let hash = chunk.input_hash(0).unwrap().to_string();
        assert_eq!(hash, sha1_hex(&packed));
        // The SHA-1 of no bytes, as hashlib gives it.
        let empty = "da39a3ee5e6b4b0d3255bfef95601890afd80709";
        assert_eq!(chunk.input_hash(1), Some(empty));
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        let chunk = files.read(Some(&hash));
        assert!(chunk.is_current(0));
        assert_eq!(chunk.input_hash(0), None);
        assert!(chunk.counts(0).is_empty());
        assert!(!chunk.is_current(1));
        assert_eq!(chunk.careful(1), Some((Careful::NoAnswers, &b""[..])));
    }

    #[test]
    fn reports_a_file_it_cannot_read() {
        let files = Files::new("unreadable", &[]);
        let missing = files.dir.path().join("missing.jsonl");
        let file = TrialsFile {
            path: &missing,
            compressed: false,
            current_hash: None,
        };
        let chunk = TrialsChunk::read(&[file], &questions());
        assert_eq!(chunk.read_error(0), Some(libc::ENOENT));
        assert_eq!(chunk.input_hash(0), None);
        assert_eq!(chunk.careful(0), None);
        assert!(!chunk.is_current(0));
    }

    #[test]
    fn the_index_gives_the_content_size() {
        for text in [&b""[..], RUN.as_bytes(), &RUN.repeat(5000).into_bytes()] {
            let packed = compress(text);
            assert_eq!(xz_content_size(&packed), Some(text.len()));
            assert_eq!(decompress_xz(&packed).as_deref(), Some(text));
        }
        assert_eq!(xz_content_size(b"YZ"), None);
        assert_eq!(xz_content_size(&[0; 12]), None);
    }

    #[test]
    fn leaves_what_it_is_not_sure_about_to_the_caller() {
        let packed = compress(RUN.as_bytes());
        let mut trailing = packed.clone();
        trailing.extend_from_slice(&[0, 0, 0, 0]);
        let odd = "{\"question\": \"Q one\", \"answer\": \"a\", \"scores\": {}}\n";
        let unknown = "{\"question\": \"Q three\", \"answer\": \"a\"}\n";
        let mixed = concat!(
            "{\"question\": \"Q one\", \"answer\": \"a\", \"generated\": true}\n",
            "{\"question\": \"Q two\", \"answer\": \"b\"}\n",
        );
        let number = "{\"question\": \"Q one\", \"answer\": \"a\", \"generated\": 1}\n";
        let string = "{\"question\": \"Q one\", \"answer\": \"a\", \"generated\": \"true\"}\n";
        let unknown_given_up = concat!(
            "{\"question\": \"Q one\", \"answer\": \"a\", \"generated\": true}\n",
            "{\"question\": \"Q three\", \"answer\": \"\", \"generated\": false}\n",
        );
        let carriage = "{\"question\": \"Q one\",\r\"answer\": \"a\"}\n";
        let cases: [(&[u8], bool, Careful); 12] = [
            (b"", false, Careful::NoAnswers),
            (b" \n\t\n", false, Careful::NoAnswers),
            (b"", true, Careful::NoAnswers),
            (RUN.as_bytes(), true, Careful::NotOneXzStream),
            (&packed[..packed.len() - 1], true, Careful::NotOneXzStream),
            (&trailing, true, Careful::NotOneXzStream),
            (odd.as_bytes(), false, Careful::OddLine),
            (mixed.as_bytes(), false, Careful::OddLine),
            (number.as_bytes(), false, Careful::OddLine),
            (string.as_bytes(), false, Careful::OddLine),
            (unknown.as_bytes(), false, Careful::UnknownQuestion),
            (unknown_given_up.as_bytes(), false, Careful::UnknownQuestion),
        ];
        for (bytes, compressed, expected) in cases {
            let chunk = Files::new("careful", &[(bytes, compressed)]).read(None);
            assert_eq!(chunk.careful(0), Some((expected, bytes)));
            assert!(chunk.counts(0).is_empty());
        }
        let chunk = Files::new("carriage", &[(carriage.as_bytes(), false)]).read(None);
        let why = chunk.careful(0).map(|(why, _)| why);
        assert_eq!(why, Some(Careful::CarriageReturn));
        // A final carriage return ends the last line for both readers.
        let last = b"{\"question\": \"Q one\", \"answer\": \"a\"}\r";
        let chunk = Files::new("last", &[(last, false)]).read(None);
        assert_eq!(chunk.careful(0), None);
    }

    #[test]
    fn scores_each_question_over_the_chunk_as_one_batch() {
        let run = (RUN.as_bytes(), false);
        let chunk = Files::new("scores", &[run, (b"", false), run]).read(None);
        let references = vec!["b1 b2".to_string(), "b2".to_string()];
        let source = Source {
            key: "R",
            answers: &references,
        };
        let scorer = QuestionScorer::new(&[source], Vec::<WeightedRule>::new(), 0).unwrap();
        let sources = vec!["R".to_string()];
        assert_eq!(chunk.num_answers(1, &[0, 1, 2]), 4);
        let sum = SumMode::Compensated;
        chunk
            .score_question(1, &[0, 1, 2], &scorer, &sources, &[], sum)
            .unwrap();
        assert_eq!(
            chunk.score_question(1, &[0], &scorer, &sources, &[], sum),
            Err(ChunkError::AlreadyScored(1))
        );
        assert_eq!(
            chunk.run_scores(1, 1).err(),
            Some(ChunkError::NotScored(1, 1))
        );
        assert_eq!(chunk.run_scores(0, 1).map(|(_, span)| span), Ok(0..2));

        let scores = chunk.scores(1).unwrap();
        assert_eq!(scores.span(0), Some(0..2));
        assert_eq!(scores.span(1), None);
        assert_eq!(scores.span(2), Some(2..4));
        assert_eq!(scores.lengths, vec![2.0; 4]);
        let answers: Vec<Vec<char>> = ["b1", "b2"].iter().map(|a| a.chars().collect()).collect();
        let alone = scorer.score_batch(&answers, &[], true, SumMode::Compensated);
        assert_eq!(scores.average[2..], alone.average[..]);
        assert_eq!(scores.records[2..], alone.records_json(&sources)[..]);
        assert!(chunk.scores(0).is_none());
        assert_eq!(chunk.record(2, 1, 1), Ok(scores.records[3].as_str()));
        assert_eq!(chunk.record(2, 1, 2), Err(ChunkError::NoAnswer(2, 1, 2)));
        let stats = chunk.question_stats(2, 1, sum).unwrap();
        assert_eq!(stats.length, 2.0);
        let run = chunk.run_stats(2, &[1], sum).unwrap();
        assert_eq!(run.num_trials, 2);
        assert_eq!(run.score, stats.score);
        assert_eq!(
            chunk.run_stats(2, &[0, 1], sum),
            Err(ChunkError::NotScored(2, 0))
        );
        let cache = chunk.cache_questions(2, &[(0, b"\"Q01\""), (1, b"\"Q02\"")]);
        let expected = format!("\"Q02\":[{},{}]", scores.records[2], scores.records[3]);
        assert_eq!(String::from_utf8(cache).unwrap(), expected);
    }
}
