//! Values written as Python's `json.dumps(..., ensure_ascii=False)` writes them: floats in
//! `repr` form, strings with JSON escapes but no `\uXXXX` for non-ASCII characters.

use std::fmt::Write;

/// Appends `x` as Python's `repr(float)`: the shortest digits that round-trip, in positional
/// notation for exponents -4..16, else as `d.ddde-XX`. No allocation: this runs for every
/// value of every record.
pub fn write_python_float(out: &mut String, x: f64) {
    match whole_millionths(x) {
        Some(millionths) => write_millionths(out, x.is_sign_negative(), millionths),
        None => write_shortest_digits(out, x),
    }
}

/// `write_python_float` for any value.
fn write_shortest_digits(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    // Rust's `{:e}` gives the same shortest round-trip digits: "1.2345e-6" for the magnitude.
    // Written at the end of `out`, its digits and exponent are read back, then rewritten.
    let start = out.len();
    let _ = write!(out, "{:e}", x.abs());
    let mut digits = [0u8; 32];
    let mut num_digits = 0;
    let mut exponent: i32 = 0;
    let mut negative_exponent = false;
    let mut in_exponent = false;
    for &byte in &out.as_bytes()[start..] {
        match byte {
            b'e' => in_exponent = true,
            b'-' => negative_exponent = true,
            b'0'..=b'9' if in_exponent => exponent = exponent * 10 + i32::from(byte - b'0'),
            b'0'..=b'9' if num_digits < digits.len() => {
                digits[num_digits] = byte;
                num_digits += 1;
            }
            _ => {}
        }
    }
    out.truncate(start);
    if negative_exponent {
        exponent = -exponent;
    }
    // ASCII digits only.
    let digits = std::str::from_utf8(&digits[..num_digits]).unwrap_or("0");
    if x.is_sign_negative() {
        out.push('-');
    }
    if (-4..16).contains(&exponent) {
        if exponent < 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
            out.push_str(digits);
        } else {
            let integer_digits = exponent as usize + 1;
            if digits.len() <= integer_digits {
                out.push_str(digits);
                out.extend(std::iter::repeat_n('0', integer_digits - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..integer_digits]);
                out.push('.');
                out.push_str(&digits[integer_digits..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        );
    }
}

/// Below 2^32 a double's spacing is under 1e-6: the interval of decimals that round to it
/// holds at most one multiple of 1e-6.
const MILLIONTHS_BELOW: f64 = 4_294_967_296.0;

/// |x| as a whole number of millionths, when x is the double nearest to that number of
/// millionths and Python writes it positionally (0 or 1e-4 <= |x| < 2^32), as nearly all of
/// a record's values (rounded to 5 or 6 digits) are. Then that decimal is the only one with
/// at most six fraction digits that rounds to x, and one with fewer significant digits would
/// have fewer fraction digits: it is the shortest that round-trips, the digits `repr` writes.
#[inline]
fn whole_millionths(x: f64) -> Option<u64> {
    let magnitude = x.abs();
    if !(magnitude == 0.0 || (1e-4..MILLIONTHS_BELOW).contains(&magnitude)) {
        return None;
    }
    let millionths = (magnitude * 1e6).round();
    // Both operands are exact and the division is correctly rounded.
    (millionths / 1e6 == magnitude).then_some(millionths as u64)
}

/// Writes `millionths / 1e6` as `repr` does: the integer part, a point, the fraction without
/// trailing zeros (at least one digit).
fn write_millionths(out: &mut String, negative: bool, millionths: u64) {
    if negative {
        out.push('-');
    }
    let mut digits = [0u8; 24];
    let mut start = digits.len();
    let mut rest = millionths;
    // The six fraction digits, then the integer part (at least one digit).
    while start > digits.len() - 7 || rest > 0 {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    let point = digits.len() - 6;
    let mut end = digits.len();
    while end > point + 1 && digits[end - 1] == b'0' {
        end -= 1;
    }
    for &digit in &digits[start..point] {
        out.push(digit as char);
    }
    out.push('.');
    for &digit in &digits[point..end] {
        out.push(digit as char);
    }
}

/// Appends `text` as a JSON string with `ensure_ascii=False` escaping.
pub fn write_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float(x: f64) -> String {
        let mut out = String::new();
        write_python_float(&mut out, x);
        out
    }

    #[test]
    fn floats_look_like_python_repr() {
        assert_eq!(float(1.0), "1.0");
        assert_eq!(float(0.0), "0.0");
        assert_eq!(float(-0.0), "-0.0");
        assert_eq!(float(1.107333), "1.107333");
        assert_eq!(float(0.5), "0.5");
        assert_eq!(float(5e-6), "5e-06");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(0.00012), "0.00012");
        assert_eq!(float(123.0), "123.0");
        assert_eq!(float(1e16), "1e+16");
        assert_eq!(float(1.5e16), "1.5e+16");
        assert_eq!(float(1234567890123456.0), "1234567890123456.0");
        assert_eq!(float(-2.5e-7), "-2.5e-07");
        assert_eq!(float(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(float(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(float(-f64::MIN_POSITIVE), "-2.2250738585072014e-308");
        assert_eq!(float(5e-324), "5e-324");
        assert_eq!(float(-123.456), "-123.456");
    }

    #[test]
    fn millionths_are_written_as_the_shortest_digits() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200_000 {
            let bits = next();
            let scale = [1.0, 10.0, 1e3, 1e6, 1e9][(bits % 5) as usize];
            let millionths = (bits >> 8) % (scale as u64 * 1_000_000 + 1);
            for x in [
                millionths as f64 / 1e6,
                -(millionths as f64) / 1e6,
                f64::from_bits(bits),
            ] {
                if let Some(millionths) = whole_millionths(x) {
                    let (mut fast, mut general) = (String::new(), String::new());
                    write_millionths(&mut fast, x.is_sign_negative(), millionths);
                    write_shortest_digits(&mut general, x);
                    assert_eq!(fast, general, "{x:e}");
                }
            }
        }
        assert_eq!(whole_millionths(0.1 + 0.2), None);
        assert_eq!(whole_millionths(5e-5), None);
        assert_eq!(whole_millionths(1e10), None);
        assert_eq!(float(4294967295.5), "4294967295.5");
        assert_eq!(float(0.000123), "0.000123");
    }

    #[test]
    fn strings_escape_like_json_dumps_without_ascii() {
        let mut out = String::new();
        write_json_string(&mut out, "字\"\\\n\u{1}");
        assert_eq!(out, "\"字\\\"\\\\\\n\\u0001\"");
    }
}
