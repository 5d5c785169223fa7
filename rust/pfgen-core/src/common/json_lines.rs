//! A strict reader of JSON lines, each a JSON object (RFC 8259, without NaN or Infinity), in
//! valid UTF-8, with no lone surrogate, that notes the top-level fields a caller asks for. It
//! also refuses what orjson refuses beyond that (a number that overflows a double, nesting
//! deeper than 1024 levels), so that a line it takes is one orjson takes, with the same values.
//!
//! A line break can only end a line (inside a JSON string it would be an unescaped control
//! character) and bytes beyond ASCII only belong inside strings, where their UTF-8 is checked;
//! so the parser runs over a block of lines and stops at each line break.

use std::ops::Range;

/// Deeper nesting is refused (the line's object is the first level), as orjson does, so that
/// reading cannot overflow the stack.
const MAX_DEPTH: usize = 1024;
/// Numbers longer than this, or with an exponent, are checked for overflow (shorter ones are
/// below 1e300).
const SHORT_NUMBER: usize = 300;

/// `block` cut into parts of about `part_bytes` bytes, each made of whole lines.
pub(crate) fn split_parts(block: &[u8], part_bytes: usize) -> Vec<Range<usize>> {
    let mut parts = Vec::new();
    let mut start = 0;
    while start < block.len() {
        let end = match block.get(start + part_bytes..) {
            Some(rest) => rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(block.len(), |offset| start + part_bytes + offset + 1),
            None => block.len(),
        };
        parts.push(start..end);
        start = end;
    }
    parts
}

/// The end of the line starting at `start` (its line break, or the end of `bytes`).
pub(crate) fn line_end(bytes: &[u8], start: usize) -> usize {
    bytes[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |offset| start + offset)
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r')
}

pub(crate) enum Error {
    Syntax(&'static str),
    Utf8,
    TooDeep,
}

/// A string value: where it is (its quotes included) and whether it holds escapes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StringValue {
    pub start: usize,
    pub end: usize,
    pub escaped: bool,
}

impl StringValue {
    /// The text between the quotes, as it stands in the line.
    pub fn inner(self) -> Range<usize> {
        self.start + 1..self.end - 1
    }
}

/// What a line's object holds of one field asked for: how often the field appears, where its
/// last value is, and that value if it is a string.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FieldValue {
    pub count: u32,
    pub start: usize,
    pub end: usize,
    pub string: Option<StringValue>,
}

/// The kind of the JSON value `value` (whole and valid), as Python's readers word it
/// (`common/jsonl.py`'s TYPE_NAMES, after orjson's reading: an integer beyond 64 bits is a
/// double).
pub(crate) fn type_name(value: &[u8]) -> &'static str {
    match value.first() {
        Some(b'"') => "a string",
        Some(b'{') => "an object",
        Some(b'[') => "a list",
        Some(b't' | b'f') => "true or false",
        Some(b'n') => "null",
        _ => {
            let text = std::str::from_utf8(value).unwrap_or("");
            if text.parse::<i64>().is_ok() || text.parse::<u64>().is_ok() {
                "an integer"
            } else {
                "a number"
            }
        }
    }
}

pub(crate) struct Parser<'a> {
    pub bytes: &'a [u8],
    pub position: usize,
    pub line_start: usize,
}

impl Parser<'_> {
    /// The message of an error at the current position.
    pub fn describe(&self, error: Error) -> String {
        let offset = self.position - self.line_start;
        match error {
            Error::Syntax(what) => format!("not valid JSON: {what} (column {})", offset + 1),
            // As `jsonl.line_problem` words it: the offset of the first invalid byte.
            Error::Utf8 => format!("not valid UTF-8 at byte {offset}"),
            Error::TooDeep => format!("not valid JSON: nested deeper than {MAX_DEPTH} levels"),
        }
    }

    /// A non-blank line from the current position: a JSON object, then only whitespace up to
    /// the line break (where it stops). Returns what the object holds of `fields`.
    pub fn object_line<const N: usize>(
        &mut self,
        fields: &[&str; N],
    ) -> Result<[FieldValue; N], String> {
        if self.peek() != Some(b'{') {
            // Another JSON value, or not JSON: as Python's reader tells them apart.
            let start = self.position;
            self.value(0).map_err(|error| self.describe(error))?;
            let end = self.position;
            self.end_of_line()?;
            let kind = type_name(&self.bytes[start..end]);
            return Err(format!("expected a JSON object, got {kind}"));
        }
        let values = self.record(fields).map_err(|error| self.describe(error))?;
        self.end_of_line()?;
        Ok(values)
    }

    /// Only whitespace from here to the line break.
    fn end_of_line(&mut self) -> Result<(), String> {
        self.skip_whitespace();
        if !matches!(self.peek(), None | Some(b'\n')) {
            return Err(self.describe(Error::Syntax("unexpected text after the value")));
        }
        Ok(())
    }

    pub fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    pub fn skip_whitespace(&mut self) {
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

    /// The top-level object, noting the fields asked for.
    fn record<const N: usize>(&mut self, fields: &[&str; N]) -> Result<[FieldValue; N], Error> {
        let mut values = [FieldValue::default(); N];
        let mut key = Vec::new();
        self.items(b'}', "expected ',' or '}'", |parser| {
            key.clear();
            parser.string(Some(&mut key))?;
            parser.colon()?;
            let field = fields.iter().position(|f| f.as_bytes() == key.as_slice());
            let start = parser.position;
            let is_string = parser.peek() == Some(b'"');
            let escaped = if is_string {
                parser.string(None)?
            } else {
                parser.value(1)?;
                false
            };
            if let Some(field) = field {
                values[field] = FieldValue {
                    count: values[field].count + 1,
                    start,
                    end: parser.position,
                    string: is_string.then_some(StringValue {
                        start,
                        end: parser.position,
                        escaped,
                    }),
                };
            }
            Ok(())
        })?;
        Ok(values)
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

    /// A value inside `depth` levels of objects and arrays.
    fn value(&mut self, depth: usize) -> Result<(), Error> {
        match self.peek() {
            Some(b'"') => self.string(None).map(|_| ()),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Error::Syntax("expected a value")),
        }
    }

    /// An object at nesting level `depth`.
    fn object(&mut self, depth: usize) -> Result<(), Error> {
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        self.items(b'}', "expected ',' or '}'", |parser| {
            parser.string(None)?;
            parser.colon()?;
            parser.value(depth)
        })
    }

    /// An array at nesting level `depth`.
    fn array(&mut self, depth: usize) -> Result<(), Error> {
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        self.items(b']', "expected ',' or ']'", |parser| parser.value(depth))
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
        let start = self.position;
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
        let mut exponent = false;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            exponent = true;
            self.position += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.position += 1;
            }
            if self.digits() == 0 {
                return Err(Error::Syntax("invalid number"));
            }
        }
        if exponent || self.position - start > SHORT_NUMBER {
            // orjson reads numbers as doubles (beyond 64-bit integers): one that overflows is
            // an error. Rust's parse rounds correctly too.
            let text = std::str::from_utf8(&self.bytes[start..self.position]).unwrap_or("");
            if !text.parse::<f64>().is_ok_and(f64::is_finite) {
                self.position = start;
                return Err(Error::Syntax("number is infinite as a double"));
            }
        }
        Ok(())
    }

    /// A string, its UTF-8 checked; its decoded bytes go to `decoded` if asked. Returns
    /// whether it holds escapes.
    fn string(&mut self, mut decoded: Option<&mut Vec<u8>>) -> Result<bool, Error> {
        self.expect(b'"', "expected a string")?;
        let mut escaped = false;
        loop {
            // A run of plain text, up to the next quote, backslash or control character: its
            // UTF-8 is checked at once (these ASCII bytes cannot cut a character).
            let rest = &self.bytes[self.position..];
            let run = plain_run(rest);
            if utf8_text(&rest[..run]).is_none() {
                // Where the first invalid byte is: the standard library's check says.
                let valid =
                    std::str::from_utf8(&rest[..run]).map_or_else(|e| e.valid_up_to(), |_| 0);
                self.position += valid;
                return Err(Error::Utf8);
            }
            if let Some(out) = decoded.as_deref_mut() {
                out.extend_from_slice(&rest[..run]);
            }
            self.position += run;
            match self.peek() {
                Some(b'"') => {
                    self.position += 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    self.position += 1;
                    escaped = true;
                    let c = self.escape()?;
                    if let Some(out) = decoded.as_deref_mut() {
                        let mut buffer = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
                    }
                }
                None | Some(b'\n') => return Err(Error::Syntax("unterminated string")),
                Some(_) => return Err(Error::Syntax("control character in a string")),
            }
        }
    }

    /// The character of an escape sequence (after its backslash); surrogates must pair.
    fn escape(&mut self) -> Result<char, Error> {
        let Some(byte) = self.peek() else {
            return Err(Error::Syntax("unterminated string"));
        };
        // Not past a line break: the caller goes on from the error's position to the line's
        // end, and would take the next line for the rest of this one.
        if byte == b'\n' {
            return Err(Error::Syntax("invalid escape"));
        }
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

/// `bytes` as text, if they are valid UTF-8 (checked with the CPU's vector instructions by
/// simdutf8, which beats the standard library's check on Japanese text).
pub(crate) fn utf8_text(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

/// Whether the byte ends a run of plain text in a JSON string.
fn is_special(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// How many bytes of `bytes` come before the first quote, backslash or control character:
/// eight at a time. In each mask, a lane's high bit is set when the lane matches (its byte
/// minus the bound borrows), and only lanes above a matching one can be set falsely: the
/// lowest set bit of their union is the first match.
#[inline]
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let matches = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (word.wrapping_sub(ONES * 0x20) & !word);
        let matches = matches & HIGHS;
        if matches != 0 {
            return at + matches.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
    at + bytes[at..]
        .iter()
        .position(|&b| is_special(b))
        .unwrap_or(bytes.len() - at)
}

/// The text of a string value that `Parser` took from `bytes`, its escapes decoded.
pub(crate) fn decode_string(bytes: &[u8], value: StringValue) -> Option<String> {
    let mut parser = Parser {
        bytes: bytes.get(..value.end)?,
        position: value.start,
        line_start: value.start,
    };
    let mut decoded = Vec::with_capacity(value.end - value.start);
    parser.string(Some(&mut decoded)).ok()?;
    String::from_utf8(decoded).ok()
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

    fn parse(line: &str) -> Result<[FieldValue; 1], String> {
        let mut parser = Parser {
            bytes: line.as_bytes(),
            position: 0,
            line_start: 0,
        };
        parser.object_line(&["a"])
    }

    #[test]
    fn plain_runs_end_at_the_first_special_byte() {
        let mut state = 7u64;
        for length in 0..200 {
            let bytes: Vec<u8> = (0..length)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    // Mostly plain bytes, some of every kind near the bounds.
                    let pick = (state >> 33) as usize;
                    [
                        b'a', 0xE3, 0x81, 0xFF, 0x7F, 0x20, b'!', b'#', b'[', b']', b'"', b'\\', 0,
                        0x1F,
                    ][pick % if pick % 16 == 0 { 14 } else { 10 }]
                })
                .collect();
            let expected = bytes.iter().position(|&b| is_special(b)).unwrap_or(length);
            assert_eq!(plain_run(&bytes), expected, "{bytes:x?}");
        }
    }

    #[test]
    fn refuses_what_orjson_refuses() {
        // orjson: an object holding 1023 nested arrays is read, 1024 are too deep.
        let nested = |n: usize| format!(r#"{{"a":{}1{}}}"#, "[".repeat(n), "]".repeat(n));
        assert!(parse(&nested(1023)).is_ok());
        assert!(parse(&nested(1024)).unwrap_err().contains("nested deeper"));
        // Numbers that overflow a double.
        for number in [
            "1e308",
            "1.7976931348623157e308",
            "-2.5E-400",
            &"9".repeat(308),
        ] {
            assert!(parse(&format!(r#"{{"a":{number}}}"#)).is_ok(), "{number}");
        }
        for number in [
            "1e400",
            "1.7976931348623159e308",
            "-1e309",
            &"9".repeat(309),
        ] {
            let message = parse(&format!(r#"{{"a":{number}}}"#)).unwrap_err();
            assert!(message.contains("infinite"), "{number}: {message}");
        }
    }

    #[test]
    fn notes_string_fields_and_decodes_them() {
        let line = r#"{"b":1, "a" : "x\u3042\n\"y\ud83d\ude00", "c":"z"}"#;
        let [a] = parse(line).unwrap();
        assert_eq!(a.count, 1);
        let value = a.string.unwrap();
        assert!(value.escaped);
        assert_eq!(
            decode_string(line.as_bytes(), value).as_deref(),
            Some("xあ\n\"y😀")
        );
        let plain = r#"{"a":"答え"}"#;
        let value = parse(plain).unwrap()[0].string.unwrap();
        assert!(!value.escaped);
        assert_eq!(&plain[value.inner()], "答え");
        assert_eq!(
            decode_string(plain.as_bytes(), value).as_deref(),
            Some("答え")
        );
        let [a] = parse(r#"{"a":"x","\u0061":[1]}"#).unwrap();
        assert_eq!((a.count, a.string), (2, None));
    }
}
