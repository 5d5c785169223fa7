//! Python's `round(x, ndigits)` for f64: the exact binary value rounded to `ndigits` decimals,
//! ties to even, then converted back to the nearest f64.

/// Largest number of decimals supported: 5^digits times a 53-bit mantissa must fit in u128.
const MAX_DIGITS: u32 = 22;

/// `round(x, digits)` exactly as CPython computes it, for `digits <= 22`.
pub fn py_round(x: f64, digits: u32) -> f64 {
    assert!(
        digits <= MAX_DIGITS,
        "py_round supports at most {MAX_DIGITS} digits"
    );
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let scale = 10f64.powi(digits as i32);
    // Fast path: far from a half-way point, rounding the (inexact) product decides correctly.
    let scaled = x.abs() * scale;
    if scaled < 9.0e15 {
        let fraction = scaled - scaled.floor();
        if (fraction - 0.5).abs() > 1e-6 {
            return (scaled.round() / scale).copysign(x);
        }
    }
    (exact_rounded_integer(x.abs(), digits) as f64 / scale).copysign(x)
}

/// round_half_even(|x| * 10^digits) computed exactly: |x| = m * 2^e, so |x| * 10^digits =
/// m * 5^digits * 2^(e + digits), an integer times a power of two.
fn exact_rounded_integer(x: f64, digits: u32) -> u128 {
    let bits = x.to_bits();
    let exponent_bits = ((bits >> 52) & 0x7ff) as i32;
    let fraction_bits = bits & ((1u64 << 52) - 1);
    let (mantissa, exponent) = if exponent_bits == 0 {
        (fraction_bits, -1074)
    } else {
        (fraction_bits | (1u64 << 52), exponent_bits - 1075)
    };
    let numerator = mantissa as u128 * 5u128.pow(digits);
    let shift = exponent + digits as i32;
    if shift >= 0 {
        // An integer already (only for huge x, where f64 has no fractional part).
        return numerator << shift.min(127);
    }
    let shift = (-shift) as u32;
    if shift >= 128 {
        return 0; // far below one half: numerator < 2^120
    }
    let quotient = numerator >> shift;
    let remainder = numerator & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if remainder > half || (remainder == half && quotient % 2 == 1) {
        quotient + 1
    } else {
        quotient
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rust's fixed-precision formatting is exact with ties to even, like CPython's round.
    fn by_formatting(x: f64, digits: u32) -> f64 {
        format!("{:.*}", digits as usize, x).parse().unwrap()
    }

    #[test]
    fn exact_ties_go_to_even() {
        assert_eq!(py_round(0.0078125, 6), 0.007812);
        assert_eq!(py_round(0.125, 2), 0.12);
        assert_eq!(py_round(0.375, 2), 0.38);
        assert_eq!(py_round(2.5, 0), 2.0);
        assert_eq!(py_round(-0.125, 2), -0.12);
    }

    #[test]
    fn binary_values_below_a_decimal_tie_round_down() {
        // 2.675 is stored as 2.67499999999999982236431605997495353221893310546875.
        assert_eq!(py_round(2.675, 2), 2.67);
        assert_eq!(py_round(1.0000005, 6), by_formatting(1.0000005, 6));
    }

    #[test]
    fn agrees_with_exact_formatting_on_many_values() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = (state >> 11) as f64 / (1u64 << 53) as f64 * 3.0 - 1.0;
            for digits in [4, 5, 6] {
                // Also values sitting exactly on, or one ulp around, a decimal half-way point.
                let tie = ((x * 1e6).floor() + 0.5) / 1e6;
                for value in [
                    x,
                    tie,
                    f64::from_bits(tie.to_bits() + 1),
                    f64::from_bits(tie.to_bits() - 1),
                ] {
                    assert_eq!(
                        py_round(value, digits).to_bits(),
                        by_formatting(value, digits).to_bits(),
                        "value {value:e} digits {digits}"
                    );
                }
            }
        }
    }

    #[test]
    fn zero_tiny_and_subnormal_values() {
        assert_eq!(py_round(0.0, 6), 0.0);
        assert_eq!(py_round(1e-300, 6), 0.0);
        assert_eq!(py_round(5e-324, 6), 0.0);
        assert!(py_round(-1e-9, 6).is_sign_negative());
    }
}
