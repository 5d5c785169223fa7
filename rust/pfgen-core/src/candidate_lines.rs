//! A strict check of candidate lines (JSON lines with string fields `question` and `answer`,
//! and optionally a non-empty string `source`) before a fast, lenient parser reads them:
//! polars' NDJSON reader turns numbers or lists into strings, replaces lone surrogates and keeps
//! the first of two equal keys, where a candidate file with such lines has a problem to report.
//! Lines that pass are valid JSON (RFC 8259, without NaN or Infinity), in valid UTF-8, whose
//! object has each of those fields once, with a string value, and no lone surrogate anywhere.
//!
//! One pass over the bytes: a line break can only end a line (inside a JSON string it would be
//! an unescaped control character) and bytes beyond ASCII only belong inside strings, where
//! their UTF-8 is checked; so the parser runs over the block and stops at each line break.

use rayon::prelude::*;

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

/// Deeper nesting is refused (as orjson and most parsers do), so that checking cannot
/// overflow the stack.
const MAX_DEPTH: usize = 1024;
const FIELDS: [&str; 3] = ["question", "answer", "source"];
/// Blocks are checked in parts of about this many bytes, in parallel.
const PART_BYTES: usize = 1 << 20;

/// Checks every line of `block` (split at '\n'; a final line without one counts too).
pub fn check_lines(block: &[u8]) -> CheckedLines {
    let mut parts = Vec::new();
    let mut start = 0;
    while start < block.len() {
        let end = match block.get(start + PART_BYTES..) {
            Some(rest) => rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(block.len(), |offset| start + PART_BYTES + offset + 1),
            None => block.len(),
        };
        parts.push(start..end);
        start = end;
    }
    let checked: Vec<CheckedLines> = parts
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
            match parser.line() {
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
        parser.position = block[parser.position..part.end]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(part.end, |offset| parser.position + offset + 1);
    }
    checked
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r')
}

enum Error {
    Syntax(&'static str),
    Utf8,
    TooDeep,
}

/// How often each candidate field appears at the top level, and whether as a string.
#[derive(Default)]
struct Fields {
    count: [u32; 3],
    is_string: [bool; 3],
    source_nonempty: bool,
}

struct Parser<'a> {
    bytes: &'a [u8],
    position: usize,
    line_start: usize,
}

impl Parser<'_> {
    fn describe(&self, error: Error) -> String {
        let offset = self.position - self.line_start;
        match error {
            Error::Syntax(what) => format!("invalid JSON: {what} (column {})", offset + 1),
            // As `trials.json_problem` words it: the offset of the first invalid byte.
            Error::Utf8 => format!("invalid UTF-8 at byte {offset}"),
            Error::TooDeep => format!("invalid JSON: nested deeper than {MAX_DEPTH} levels"),
        }
    }

    /// A non-blank line from the current position: a JSON object with the candidate fields
    /// as strings, then only whitespace up to the line break (where it stops).
    fn line(&mut self) -> Result<(), String> {
        if self.peek() != Some(b'{') {
            return Err("expected a JSON object".to_string());
        }
        let seen = self.record().map_err(|error| self.describe(error))?;
        self.skip_whitespace();
        if !matches!(self.peek(), None | Some(b'\n')) {
            return Err(self.describe(Error::Syntax("unexpected text after the object")));
        }
        for (field, &count) in FIELDS.iter().zip(&seen.count) {
            if count > 1 {
                return Err(format!("field '{field}' appears {count} times"));
            }
        }
        for (i, field) in FIELDS.iter().enumerate().take(2) {
            if seen.count[i] == 0 {
                return Err(format!("missing field '{field}'"));
            }
            if !seen.is_string[i] {
                return Err(format!("field '{field}' must be a string"));
            }
        }
        if seen.count[2] == 1 && !(seen.is_string[2] && seen.source_nonempty) {
            return Err("field 'source' must be a non-empty string".to_string());
        }
        Ok(())
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(is_whitespace) {
            self.position += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), Error> {
        if self.peek() == Some(byte) {
            self.position += 1;
            Ok(())
        } else {
            Err(Error::Syntax(what))
        }
    }

    /// The top-level object, noting the candidate fields.
    fn record(&mut self) -> Result<Fields, Error> {
        let mut fields = Fields::default();
        let mut key = Vec::new();
        self.items(b'}', "expected ',' or '}'", |parser| {
            key.clear();
            parser.string(Some(&mut key))?;
            parser.colon()?;
            let field = FIELDS.iter().position(|f| f.as_bytes() == key.as_slice());
            let value_start = parser.position;
            let is_string = parser.peek() == Some(b'"');
            parser.value(1)?;
            if let Some(field) = field {
                fields.count[field] += 1;
                fields.is_string[field] = is_string;
                if field == 2 {
                    // `""` is the only empty string: any escape makes a character.
                    fields.source_nonempty = parser.position - value_start > 2;
                }
            }
            Ok(())
        })?;
        Ok(fields)
    }

    /// The items of an object or an array (its `{` or `[` at the current position), each
    /// read by `item`, up to its `close`.
    fn items(
        &mut self,
        close: u8,
        missing_separator: &'static str,
        mut item: impl FnMut(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.position += 1; // '{' or '['
        self.skip_whitespace();
        if self.peek() == Some(close) {
            self.position += 1;
            return Ok(());
        }
        loop {
            self.skip_whitespace();
            item(self)?;
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.position += 1,
                Some(byte) if byte == close => {
                    self.position += 1;
                    return Ok(());
                }
                _ => return Err(Error::Syntax(missing_separator)),
            }
        }
    }

    /// The ':' between a key and its value, with the whitespace around it.
    fn colon(&mut self) -> Result<(), Error> {
        self.skip_whitespace();
        self.expect(b':', "expected ':'")?;
        self.skip_whitespace();
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<(), Error> {
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        match self.peek() {
            Some(b'"') => self.string(None),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Error::Syntax("expected a value")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), Error> {
        self.items(b'}', "expected ',' or '}'", |parser| {
            parser.string(None)?;
            parser.colon()?;
            parser.value(depth + 1)
        })
    }

    fn array(&mut self, depth: usize) -> Result<(), Error> {
        self.items(b']', "expected ',' or ']'", |parser| {
            parser.value(depth + 1)
        })
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), Error> {
        if self.bytes[self.position..].starts_with(word) {
            self.position += word.len();
            Ok(())
        } else {
            Err(Error::Syntax("expected a value"))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.position;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.position += 1;
        }
        self.position - start
    }

    fn number(&mut self) -> Result<(), Error> {
        if self.peek() == Some(b'-') {
            self.position += 1;
        }
        match self.peek() {
            Some(b'0') => self.position += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Error::Syntax("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.position += 1;
            if self.digits() == 0 {
                return Err(Error::Syntax("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.position += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.position += 1;
            }
            if self.digits() == 0 {
                return Err(Error::Syntax("invalid number"));
            }
        }
        Ok(())
    }

    /// A string, its UTF-8 checked; its decoded bytes go to `decoded` if asked.
    fn string(&mut self, mut decoded: Option<&mut Vec<u8>>) -> Result<(), Error> {
        self.expect(b'"', "expected a string")?;
        loop {
            let Some(byte) = self.peek() else {
                return Err(Error::Syntax("unterminated string"));
            };
            let start = self.position;
            match byte {
                b'"' => {
                    self.position += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.position += 1;
                    let escaped = self.escape()?;
                    if let Some(out) = decoded.as_deref_mut() {
                        let mut buffer = [0u8; 4];
                        out.extend_from_slice(escaped.encode_utf8(&mut buffer).as_bytes());
                    }
                    continue;
                }
                b'\n' => return Err(Error::Syntax("unterminated string")),
                0x00..=0x1F => return Err(Error::Syntax("control character in a string")),
                0x20..=0x7F => self.position += 1,
                _ => self.position += utf8_char(&self.bytes[start..]).ok_or(Error::Utf8)?.1,
            }
            if let Some(out) = decoded.as_deref_mut() {
                out.extend_from_slice(&self.bytes[start..self.position]);
            }
        }
    }

    /// The character of an escape sequence (after its backslash); surrogates must pair.
    fn escape(&mut self) -> Result<char, Error> {
        let Some(byte) = self.peek() else {
            return Err(Error::Syntax("unterminated string"));
        };
        self.position += 1;
        let simple = match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(),
            _ => return Err(Error::Syntax("invalid escape")),
        };
        Ok(simple)
    }

    fn unicode_escape(&mut self) -> Result<char, Error> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !self.bytes[self.position..].starts_with(b"\\u") {
                    return Err(Error::Syntax("lone surrogate in a string"));
                }
                self.position += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(Error::Syntax("lone surrogate in a string"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(Error::Syntax("lone surrogate in a string")),
            _ => first,
        };
        char::from_u32(code).ok_or(Error::Syntax("invalid escape"))
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let digits = self
            .bytes
            .get(self.position..self.position + 4)
            .ok_or(Error::Syntax("invalid escape"))?;
        let mut value = 0;
        for &digit in digits {
            let nibble = (digit as char)
                .to_digit(16)
                .ok_or(Error::Syntax("invalid escape"))?;
            value = value * 16 + nibble;
        }
        self.position += 4;
        Ok(value)
    }
}

/// The character starting `bytes` (a byte beyond ASCII first) and its length, if it is valid
/// UTF-8: no overlong form, no surrogate, nothing beyond U+10FFFF (the Unicode standard's
/// table 3-7).
#[inline]
pub(crate) fn utf8_char(bytes: &[u8]) -> Option<(u32, usize)> {
    let lead = *bytes.first()?;
    let (length, second, payload) = match lead {
        0xC2..=0xDF => (2, 0x80..=0xBF, lead & 0x1F),
        0xE0 => (3, 0xA0..=0xBF, lead & 0x0F),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80..=0xBF, lead & 0x0F),
        0xED => (3, 0x80..=0x9F, lead & 0x0F),
        0xF0 => (4, 0x90..=0xBF, lead & 0x07),
        0xF1..=0xF3 => (4, 0x80..=0xBF, lead & 0x07),
        0xF4 => (4, 0x80..=0x8F, lead & 0x07),
        _ => return None,
    };
    let sequence = bytes.get(..length)?;
    if !second.contains(&sequence[1]) {
        return None;
    }
    let mut code = u32::from(payload);
    for &byte in &sequence[1..] {
        if byte & 0xC0 != 0x80 {
            return None;
        }
        code = (code << 6) | u32::from(byte & 0x3F);
    }
    Some((code, length))
}

#[cfg(test)]
mod tests {
    use super::*;

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
                "'answer' must be a string",
            ),
            (
                r#"{"question":"q","answer":["x"]}"#,
                "'answer' must be a string",
            ),
            (
                r#"{"question":"q","answer":null}"#,
                "'answer' must be a string",
            ),
            (
                r#"{"question":true,"answer":"a"}"#,
                "'question' must be a string",
            ),
            (r#"{"question":"q"}"#, "missing field 'answer'"),
            (r#"{"answer":"a"}"#, "missing field 'question'"),
            (
                r#"{"question":"q","answer":"a","source":""}"#,
                "'source' must be",
            ),
            (
                r#"{"question":"q","answer":"a","source":1}"#,
                "'source' must be",
            ),
            (
                r#"{"question":"q","answer":"a","answer":"b"}"#,
                "appears 2 times",
            ),
            (r#"{"question":"q","answer":"a\ud83d"}"#, "lone surrogate"),
            (r#"{"question":"q","answer":"a\udc00"}"#, "lone surrogate"),
            (
                r#"{"question":"q","answer":"a\ud83d\u0041"}"#,
                "lone surrogate",
            ),
            (
                r#"{"question":"q","answer":"a"} x"#,
                "unexpected text after the object",
            ),
            (
                r#"{"question":"q","answer":"a"}{}"#,
                "unexpected text after the object",
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
            (r#"{not json"#, "expected a string"),
            (r#"[]"#, "expected a JSON object"),
            (r#""x""#, "expected a JSON object"),
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
            Some("invalid UTF-8 at byte 27")
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
