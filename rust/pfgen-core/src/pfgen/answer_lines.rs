//! Reading the input of `score`: JSON lines whose object has the string fields `question` and
//! `answer` (other fields are carried through untouched). The lines read here are scored and
//! written back without a Python object per line. The others (not valid JSON, a field missing,
//! repeated or not a string, a `scores` field to replace, a `generated` field: the runners' mark
//! of an answer given up, which the caller checks and honours) are left to the caller, which
//! reads them as orjson does and reports their problems in its own words.
//!
//! `eval`'s reader of trials files (`read_marked_answer_lines`) also takes a line whose
//! `generated` field appears once with the value `true` or `false`, and keeps that mark.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;

use crate::common::json_lines::{
    decode_string, line_end, split_parts, utf8_text, Parser, StringValue,
};

/// `question_of_line` of a line holding only whitespace (Python's `bytes.strip` set).
pub const BLANK: i32 = -1;
/// `question_of_line` of a line left to the caller.
pub const OTHER: i32 = -2;

const FIELDS: [&str; 4] = ["question", "answer", "scores", "generated"];
/// Blocks are read in parts of about this many bytes, in parallel.
const PART_BYTES: usize = 1 << 20;

/// A string value as it stands in the block (no escapes), or decoded.
enum Text {
    Raw(Range<usize>),
    Decoded(String),
}

impl Text {
    fn as_str<'a>(&'a self, block: &'a [u8]) -> &'a str {
        match self {
            Text::Raw(range) => raw_str(block, range.clone()),
            Text::Decoded(text) => text,
        }
    }
}

/// A string value's text without escapes (the parser checked its UTF-8).
fn raw_str(block: &[u8], range: Range<usize>) -> &str {
    utf8_text(&block[range]).unwrap_or_default()
}

/// The lines of a block (or of a part of it, while reading).
#[derive(Default)]
pub struct AnswerLines {
    /// Every line's byte range in the block, without its line break.
    pub ranges: Vec<(usize, usize)>,
    /// Per line: the index of its question in `questions`, or BLANK, or OTHER.
    pub question_of_line: Vec<i32>,
    /// The question texts of the lines read, each once, in order of first appearance.
    pub questions: Vec<String>,
    /// Per line: its `generated` mark, for the lines read that have one.
    pub generated: Vec<Option<bool>>,
    /// Per line: its answer, for the lines read.
    answers: Vec<Option<Text>>,
}

/// Whether a line with a `generated` mark is read, or left to the caller.
#[derive(Clone, Copy)]
enum Marks {
    Leave,
    Read,
}

/// Reads every line of `block` (split at '\n'; a final line without one counts too); a line
/// with a `generated` mark is left to the caller (`score`'s reader).
pub fn read_answer_lines(block: &[u8]) -> AnswerLines {
    read_lines(block, Marks::Leave)
}

/// As `read_answer_lines`, but a line whose `generated` field appears once, `true` or
/// `false`, is read, its mark kept (`eval`'s reader of trials files).
pub fn read_marked_answer_lines(block: &[u8]) -> AnswerLines {
    read_lines(block, Marks::Read)
}

fn read_lines(block: &[u8], marks: Marks) -> AnswerLines {
    let parts: Vec<AnswerLines> = split_parts(block, PART_BYTES)
        .into_par_iter()
        .map(|part| read_part(block, part, marks))
        .collect();
    let mut all = AnswerLines::default();
    let mut question_index: HashMap<String, i32> = HashMap::new();
    for part in parts {
        // The part's question indices, renumbered among the block's.
        let renumbered: Vec<i32> = part
            .questions
            .into_iter()
            .map(|text| {
                let next = all.questions.len() as i32;
                *question_index.entry(text).or_insert_with_key(|text| {
                    all.questions.push(text.clone());
                    next
                })
            })
            .collect();
        all.ranges.extend(part.ranges);
        all.answers.extend(part.answers);
        all.generated.extend(part.generated);
        all.question_of_line.extend(
            part.question_of_line.into_iter().map(|question| {
                usize::try_from(question).map_or(question, |index| renumbered[index])
            }),
        );
    }
    all
}

/// The lines of `block[part]` (whole lines).
fn read_part(block: &[u8], part: Range<usize>, marks: Marks) -> AnswerLines {
    let bytes = &block[..part.end];
    let mut lines = AnswerLines::default();
    let mut question_index: HashMap<Cow<str>, i32> = HashMap::new();
    let mut start = part.start;
    while start < part.end {
        let end = line_end(bytes, start);
        lines.ranges.push((start, end));
        let blank = bytes[start..end].iter().all(|&b| is_python_whitespace(b));
        let read = if blank {
            None
        } else {
            read_line(bytes, start, marks)
        };
        let question = match read {
            Some((question, answer, generated)) => {
                lines.answers.push(Some(answer));
                lines.generated.push(generated);
                let text = match question {
                    Text::Raw(range) => Cow::Borrowed(raw_str(bytes, range)),
                    Text::Decoded(text) => Cow::Owned(text),
                };
                match question_index.get(text.as_ref()) {
                    Some(&index) => index,
                    None => {
                        let index = lines.questions.len() as i32;
                        lines.questions.push(text.to_string());
                        question_index.insert(text, index);
                        index
                    }
                }
            }
            None => {
                lines.answers.push(None);
                lines.generated.push(None);
                if blank {
                    BLANK
                } else {
                    OTHER
                }
            }
        };
        lines.question_of_line.push(question);
        start = end + 1;
    }
    lines
}

/// The question, the answer and the `generated` mark (if it has one) of the line at `start`,
/// if it is one this reader takes.
fn read_line(bytes: &[u8], start: usize, marks: Marks) -> Option<(Text, Text, Option<bool>)> {
    let mut parser = Parser {
        bytes,
        position: start,
        line_start: start,
    };
    parser.skip_whitespace();
    let [question, answer, scores, generated] = parser.object_line(&FIELDS).ok()?;
    if question.count != 1 || answer.count != 1 || scores.count != 0 {
        return None;
    }
    let mark = match (generated.count, marks) {
        (0, _) => None,
        (1, Marks::Read) => match &bytes[generated.start..generated.end] {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => return None,
        },
        _ => return None,
    };
    Some((
        text(bytes, question.string?)?,
        text(bytes, answer.string?)?,
        mark,
    ))
}

fn text(bytes: &[u8], value: StringValue) -> Option<Text> {
    Some(if value.escaped {
        Text::Decoded(decode_string(bytes, value)?)
    } else {
        Text::Raw(value.inner())
    })
}

/// Python's `bytes.isspace` set: what `bytes.strip` removes.
fn is_python_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

impl AnswerLines {
    /// The answer of line `line`, if it was read (`question_of_line[line] >= 0`).
    pub fn answer<'a>(&'a self, block: &'a [u8], line: usize) -> Option<&'a str> {
        self.answers
            .get(line)?
            .as_ref()
            .map(|text| text.as_str(block))
    }

    /// The lines whose question is `questions[question]`, in order.
    pub fn lines_of(&self, question: usize) -> Vec<usize> {
        let question = i32::try_from(question).unwrap_or(i32::MAX);
        (0..self.question_of_line.len())
            .filter(|&line| self.question_of_line[line] == question)
            .collect()
    }
}

/// `line` (from `AnswerLines::ranges`, a line read) with `"scores": record` added as the last
/// field of its object, and a line break: its bytes in order.
pub fn scored_line<'a>(line: &'a [u8], record: &'a str) -> [&'a [u8]; 4] {
    let end = line.len()
        - line
            .iter()
            .rev()
            .take_while(|&&byte| is_python_whitespace(byte))
            .count();
    // Without the object's closing brace, its last byte before the whitespace.
    [
        &line[..end.saturating_sub(1)],
        b", \"scores\": ",
        record.as_bytes(),
        b"}\n",
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_lines_it_is_sure_about() {
        let block = concat!(
            "{\"question\": \"Q1\", \"answer\": \"答え\", \"id\": [1, {\"x\": null}]}\n",
            " \t\u{b}\u{c}\r\n",
            "{\"answer\": \"a\\nb\\u3042\", \"question\": \"Q\\u0032\"}\r\n",
            "{\"question\": \"Q1\", \"answer\": 5}\n",
            "{\"question\": \"Q1\", \"answer\": \"a\", \"scores\": {}}\n",
            "{\"question\": \"Q1\", \"answer\": \"a\", \"generated\": true}\n",
            "{\"question\": \"Q1\", \"answer\": \"a\", \"answer\": \"b\"}\n",
            "{\"question\": \"Q1\", \"answer\": \"a\\ud800\"}\n",
            "not json\n",
            "{\"question\": \"Q2\", \"answer\": \"\"}"
        )
        .as_bytes();
        let lines = read_answer_lines(block);
        assert_eq!(lines.questions, vec!["Q1", "Q2"]);
        assert_eq!(
            lines.question_of_line,
            vec![0, BLANK, 1, OTHER, OTHER, OTHER, OTHER, OTHER, OTHER, 1]
        );
        assert_eq!(lines.answer(block, 0), Some("答え"));
        assert_eq!(lines.answer(block, 1), None);
        assert_eq!(lines.answer(block, 2), Some("a\nbあ"));
        assert_eq!(lines.answer(block, 9), Some(""));
        assert_eq!(lines.lines_of(1), vec![2, 9]);
        let (start, end) = lines.ranges[9];
        assert_eq!(end, block.len());
        let scored = scored_line(&block[start..end], "{\"average\": 0.5}").concat();
        assert_eq!(
            scored,
            b"{\"question\": \"Q2\", \"answer\": \"\", \"scores\": {\"average\": 0.5}}\n"
        );
        let (start, end) = lines.ranges[2];
        assert!(scored_line(&block[start..end], "{}")
            .concat()
            .ends_with(b"\"Q\\u0032\", \"scores\": {}}\n"));
    }

    #[test]
    fn eval_reads_the_generated_mark_and_score_leaves_it() {
        let block = concat!(
            "{\"question\": \"Q1\", \"answer\": \"a\", \"generated\": true}\n",
            "{\"generated\" : false, \"question\": \"Q2\", \"answer\": \"\"}\n",
            "{\"question\": \"Q1\", \"answer\": \"b\"}\n",
            "{\"question\": \"Q1\", \"answer\": \"a\", \"generated\": 1}\n",
            "{\"question\": \"Q1\", \"answer\": \"a\", \"generated\": \"true\"}\n",
            "{\"question\": \"Q1\", \"answer\": \"a\", \"generated\": null}\n",
            "{\"question\": \"Q1\", \"answer\": \"a\", \"generated\": true, \"generated\": true}\n",
            "\n",
        )
        .as_bytes();
        let marked = read_marked_answer_lines(block);
        assert_eq!(marked.questions, vec!["Q1", "Q2"]);
        assert_eq!(
            marked.question_of_line,
            vec![0, 1, 0, OTHER, OTHER, OTHER, OTHER, BLANK]
        );
        assert_eq!(
            marked.generated,
            vec![Some(true), Some(false), None, None, None, None, None, None]
        );
        assert_eq!(marked.answer(block, 1), Some(""));
        let score = read_answer_lines(block);
        assert_eq!(score.questions, vec!["Q1"]);
        assert_eq!(
            score.question_of_line,
            vec![OTHER, OTHER, 0, OTHER, OTHER, OTHER, OTHER, BLANK]
        );
        assert_eq!(score.generated, vec![None; 8]);
        assert_eq!(score.lines_of(0), vec![2]);
    }

    #[test]
    fn parts_share_question_numbers() {
        // Over several parts, questions first seen in different parts.
        let mut block = Vec::new();
        for index in 0..100_000 {
            let question = index * 7 / 100_000;
            block.extend_from_slice(
                format!("{{\"question\":\"q{question}\",\"answer\":\"{index}\"}}\n").as_bytes(),
            );
        }
        assert!(block.len() > 2 * PART_BYTES);
        let lines = read_answer_lines(&block);
        let expected: Vec<String> = (0..7).map(|q| format!("q{q}")).collect();
        assert_eq!(lines.questions, expected);
        for (line, &question) in lines.question_of_line.iter().enumerate() {
            assert_eq!(question, (line * 7 / 100_000) as i32);
            assert_eq!(lines.answer(&block, line), Some(line.to_string().as_str()));
        }
    }
}
