//! A strict check of candidate lines (JSON lines with string fields `question` and `answer`,
//! and optionally a non-empty string `source`) before a fast, lenient parser reads them:
//! polars' NDJSON reader turns numbers or lists into strings, replaces lone surrogates and keeps
//! the first of two equal keys, where a candidate file with such lines has a problem to report.
//! Lines that pass are valid JSON (RFC 8259, without NaN or Infinity), in valid UTF-8, whose
//! object has each of those fields once, with a string value, and no lone surrogate anywhere
//! (read by `json_lines`).

use rayon::prelude::*;

use crate::common::json_lines::{line_end, split_parts, type_name, FieldValue, Parser};

/// One unusable line: its index in the block (0-based) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    pub line: usize,
    pub message: String,
}

/// The outcome for a block of lines.
#[derive(Debug, Default)]
pub struct CheckedLines {
    /// Byte ranges of the usable lines (without their line break), in order.
    pub usable: Vec<(usize, usize)>,
    /// Index of each usable line in the block (0-based).
    pub line_indices: Vec<u32>,
    pub problems: Vec<LineProblem>,
    /// Lines holding only whitespace (skipped, not problems).
    pub blank: usize,
    /// Lines in the block, of every kind.
    pub lines: usize,
}

const FIELDS: [&str; 3] = ["question", "answer", "source"];
/// Blocks are checked in parts of about this many bytes, in parallel.
const PART_BYTES: usize = 1 << 20;

/// Checks every line of `block` (split at '\n'; a final line without one counts too).
pub fn check_lines(block: &[u8]) -> CheckedLines {
    let checked: Vec<CheckedLines> = split_parts(block, PART_BYTES)
        .into_par_iter()
        .map(|part| check_part(block, part))
        .collect();
    let mut all = CheckedLines::default();
    for part in checked {
        let first_line = all.lines;
        all.usable.extend(part.usable);
        all.line_indices.extend(
            part.line_indices
                .iter()
                .map(|&index| index + first_line as u32),
        );
        all.problems
            .extend(part.problems.into_iter().map(|problem| LineProblem {
                line: problem.line + first_line,
                message: problem.message,
            }));
        all.blank += part.blank;
        all.lines += part.lines;
    }
    all
}

/// The lines of `block[part]` (whole lines), numbered from 0, with ranges in `block`.
fn check_part(block: &[u8], part: std::ops::Range<usize>) -> CheckedLines {
    let mut checked = CheckedLines::default();
    let mut parser = Parser {
        bytes: &block[..part.end],
        position: part.start,
        line_start: part.start,
    };
    while parser.position < part.end {
        parser.line_start = parser.position;
        parser.skip_whitespace();
        let index = checked.lines;
        if matches!(parser.peek(), None | Some(b'\n')) {
            checked.blank += 1;
        } else {
            match parser
                .object_line(&FIELDS)
                .and_then(|values| check_fields(block, values))
            {
                Ok(()) => {
                    checked.usable.push((parser.line_start, parser.position));
                    checked.line_indices.push(index as u32);
                }
                Err(message) => checked.problems.push(LineProblem {
                    line: index,
                    message,
                }),
            }
        }
        checked.lines += 1;
        parser.position = (line_end(&block[..part.end], parser.position) + 1).min(part.end);
    }
    checked
}

/// Each candidate field at most once; `question` and `answer` strings, `source` a non-empty
/// string. Worded as Python's readers word them (`common/jsonl.py`).
fn check_fields(block: &[u8], values: [FieldValue; 3]) -> Result<(), String> {
    for (field, value) in FIELDS.iter().zip(&values) {
        if value.count > 1 {
            return Err(format!("field \"{field}\": appears {} times", value.count));
        }
    }
    for (field, value) in FIELDS.iter().zip(&values).take(2) {
        if value.count == 0 {
            return Err(format!("field \"{field}\": missing"));
        }
        if value.string.is_none() {
            let kind = type_name(&block[value.start..value.end]);
            return Err(format!("field \"{field}\": expected a string, got {kind}"));
        }
    }
    // `""` is the only empty string: any escape makes a character.
    let source = values[2];
    if source.count == 1 {
        let got = match source.string {
            None => type_name(&block[source.start..source.end]),
            Some(text) if text.end - text.start <= 2 => "\"\"",
            Some(_) => return Ok(()),
        };
        return Err(format!(
            "field \"source\": expected a non-empty string, got {got}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::json_lines::utf8_char;

    fn check_line(line: &[u8]) -> Result<(), String> {
        let checked = check_lines(line);
        assert_eq!(checked.lines, 1);
        match checked.problems.first() {
            Some(problem) => Err(problem.message.clone()),
            None => Ok(()),
        }
    }

    fn problem(line: &str) -> Option<String> {
        check_line(line.as_bytes()).err()
    }

    #[test]
    fn accepts_candidate_records() {
        for line in [
            r#"{"question":"q","answer":"a"}"#,
            r#" { "question" : "q" , "answer" : "答え", "source": "X" } "#,
            r#"{"answer":"a\u3042\n\"\\\/\b\f\r\t\ud83d\ude00","question":"q"}"#,
            r#"{"question":"q","answer":"","extra":[1,-2.5e+3,0.1,true,false,null,{"a":[]}]}"#,
            r#"{"\u0071uestion":"q","answer":"a"}"#,
            "{\"question\":\"q\",\"answer\":\"a\"}\r",
        ] {
            assert_eq!(problem(line), None, "{line}");
        }
    }

    #[test]
    fn refuses_what_the_fast_reader_would_let_through() {
        let cases = [
            (
                r#"{"question":"q","answer":5}"#,
                r#"field "answer": expected a string, got an integer"#,
            ),
            (
                r#"{"question":"q","answer":["x"]}"#,
                r#"field "answer": expected a string, got a list"#,
            ),
            (
                r#"{"question":"q","answer":null}"#,
                r#"field "answer": expected a string, got null"#,
            ),
            (
                r#"{"question":true,"answer":"a"}"#,
                r#"field "question": expected a string, got true or false"#,
            ),
            (r#"{"question":"q"}"#, r#"field "answer": missing"#),
            (r#"{"answer":"a"}"#, r#"field "question": missing"#),
            (
                r#"{"question":"q","answer":1.5e3}"#,
                r#"field "answer": expected a string, got a number"#,
            ),
            (
                r#"{"question":"q","answer":{}}"#,
                r#"field "answer": expected a string, got an object"#,
            ),
            (
                r#"{"question":"q","answer":"a","source":""}"#,
                r#"field "source": expected a non-empty string, got """#,
            ),
            (
                r#"{"question":"q","answer":"a","source":1}"#,
                r#"field "source": expected a non-empty string, got an integer"#,
            ),
            (
                r#"{"question":"q","answer":"a","answer":"b"}"#,
                r#"field "answer": appears 2 times"#,
            ),
            (r#"{"question":"q","answer":"a\ud83d"}"#, "lone surrogate"),
            (r#"{"question":"q","answer":"a\udc00"}"#, "lone surrogate"),
            (
                r#"{"question":"q","answer":"a\ud83d\u0041"}"#,
                "lone surrogate",
            ),
            (
                r#"{"question":"q","answer":"a"} x"#,
                "not valid JSON: unexpected text after the value (column 31)",
            ),
            (
                r#"{"question":"q","answer":"a"}{}"#,
                "unexpected text after the value",
            ),
            (r#"{"question":"q","answer":NaN}"#, "expected a value"),
            (r#"{"question":"q","answer":01}"#, "expected ',' or '}'"),
            (r#"{"question":"q","answer":1.}"#, "invalid number"),
            (r#"{"question":"q","answer":"a\x"}"#, "invalid escape"),
            (r#"{"question":"q","answer":"a\u12"}"#, "invalid escape"),
            (r#"{"question":"q","answer":"a"#, "unterminated string"),
            (
                "{\"question\":\"q\",\"answer\":\"a\tb\"}",
                "control character",
            ),
            (r#"{"question":"q","answer":"a",}"#, "expected a string"),
            (
                r#"{not json"#,
                "not valid JSON: expected a string (column 2)",
            ),
            (r#"[]"#, "expected a JSON object, got a list"),
            (r#""x""#, "expected a JSON object, got a string"),
            ("-12 ", "expected a JSON object, got an integer"),
            ("1e400", "not valid JSON: number is infinite"),
            ("[1,", "not valid JSON: expected a value (column 4)"),
            ("[1] x", "not valid JSON: unexpected text after the value"),
        ];
        for (line, expected) in cases {
            let message = problem(line).unwrap_or_default();
            assert!(message.contains(expected), "{line}: {message}");
        }
        let deep = format!(
            r#"{{"question":"q","answer":"a","x":{}{}}}"#,
            "[".repeat(2000),
            "]".repeat(2000)
        );
        assert!(problem(&deep).unwrap_or_default().contains("nested deeper"));
        let invalid_utf8 = b"{\"question\":\"q\",\"answer\":\"a\xff\"}";
        assert_eq!(
            check_line(invalid_utf8).err().as_deref(),
            Some("not valid UTF-8 at byte 27")
        );
        let beyond_ascii_outside_strings = "{\"question\":\"q\",\"answer\":\"a\"、}";
        assert!(problem(beyond_ascii_outside_strings).is_some());
    }

    #[test]
    fn utf8_is_checked_and_decoded_as_the_standard_library_does() {
        // Every 1-4 byte sequence made of interesting bytes, inside a string.
        let interesting: Vec<u8> = vec![
            0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
            0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
        ];
        let mut sequences: Vec<Vec<u8>> = interesting.iter().map(|&b| vec![b]).collect();
        for _ in 1..4 {
            let longer: Vec<Vec<u8>> = sequences
                .iter()
                .filter(|s| s.len() == sequences.last().map_or(0, Vec::len))
                .flat_map(|s| {
                    interesting.iter().map(move |&b| {
                        let mut next = s.clone();
                        next.push(b);
                        next
                    })
                })
                .collect();
            sequences.extend(longer);
        }
        for sequence in sequences {
            let mut line = b"{\"question\":\"q\",\"answer\":\"".to_vec();
            line.extend_from_slice(&sequence);
            line.extend_from_slice(b"\"}");
            let decoded = std::str::from_utf8(&sequence);
            assert_eq!(check_line(&line).is_ok(), decoded.is_ok(), "{sequence:x?}");
            if let Ok(text) = decoded {
                let mut at = 0;
                for c in text.chars() {
                    let expected = (c as u32, c.len_utf8());
                    let found = if sequence[at] < 0x80 {
                        (u32::from(sequence[at]), 1)
                    } else {
                        utf8_char(&sequence[at..]).unwrap_or_default()
                    };
                    assert_eq!(found, expected, "{sequence:x?}");
                    at += c.len_utf8();
                }
            }
        }
    }

    #[test]
    fn splits_lines_and_skips_blank_ones() {
        let block = b"{\"question\":\"q\",\"answer\":\"a\"}\n\n  \r\n{\"question\":\"q\"}\n{\"question\":\"q\",\"answer\":\"b\"}";
        let checked = check_lines(block);
        assert_eq!(checked.line_indices, vec![0, 4]);
        assert_eq!(checked.blank, 2);
        assert_eq!(checked.lines, 5);
        assert_eq!(checked.problems.len(), 1);
        assert_eq!(checked.problems[0].line, 3);
        assert_eq!(
            &block[checked.usable[1].0..checked.usable[1].1],
            &block[block.len() - 29..]
        );
        assert_eq!(check_lines(b"").lines, 0);
        assert_eq!(check_lines(b"\n").lines, 1);
    }

    #[test]
    fn parts_are_numbered_as_one_block() {
        // Over several parts: every 7th line is bad, every 11th blank.
        let mut block = Vec::new();
        let mut expected_bad = Vec::new();
        for index in 0..60_000 {
            if index % 11 == 0 {
                block.extend_from_slice(b"  \n");
            } else if index % 7 == 0 {
                block.extend_from_slice(b"{\"question\":\"q\"}\n");
                expected_bad.push(index);
            } else {
                let line = format!("{{\"question\":\"q\",\"answer\":\"{index:0>30}\"}}\n");
                block.extend_from_slice(line.as_bytes());
            }
        }
        assert!(block.len() > 2 * PART_BYTES);
        let checked = check_lines(&block);
        assert_eq!(checked.lines, 60_000);
        let bad: Vec<usize> = checked.problems.iter().map(|p| p.line).collect();
        assert_eq!(bad, expected_bad);
        assert_eq!(checked.usable.len(), checked.line_indices.len());
        for (&(start, end), &index) in checked.usable.iter().zip(&checked.line_indices) {
            let expected = format!("{index:0>30}");
            assert!(block[start..end].ends_with(format!("\"{expected}\"}}").as_bytes()));
        }
    }
}
