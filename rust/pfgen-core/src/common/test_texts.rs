//! Deterministic pseudo-random texts for the tests: characters drawn from a small alphabet,
//! its first three far more often, so that n-grams repeat within and across texts.

pub fn random_texts(alphabet: &str, count: usize, max_length: usize, seed: u64) -> Vec<String> {
    let alphabet: Vec<char> = alphabet.chars().collect();
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    (0..count)
        .map(|_| {
            let length = next() % max_length;
            (0..length)
                .map(|_| alphabet[(next() % 3).min(next() % alphabet.len())])
                .collect()
        })
        .collect()
}
