//! A small open-addressing hash table from keys to slots, for the per-pair maps (token → bit
//! mask row, n-gram → count). Sized for one pair's texts; cleared between uses.

/// Keys the table takes: hashed to 64 bits.
pub trait Key: Copy + Eq + Default {
    fn hash64(self) -> u64;
}

impl Key for u32 {
    fn hash64(self) -> u64 {
        u64::from(self).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

impl Key for u128 {
    fn hash64(self) -> u64 {
        let folded = (self as u64) ^ ((self >> 64) as u64).rotate_left(29);
        (folded ^ (folded >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

const EMPTY: u32 = u32::MAX;

pub struct Table<K: Key> {
    keys: Vec<K>,
    values: Vec<u32>,
    shift: u32,
    len: usize,
}

impl<K: Key> Table<K> {
    pub fn new() -> Self {
        Table {
            keys: Vec::new(),
            values: Vec::new(),
            shift: 64,
            len: 0,
        }
    }

    /// Empties the table, with room for `count` keys at a load of at most one half.
    pub fn reset(&mut self, count: usize) {
        let slots = (2 * count.max(1)).next_power_of_two();
        if self.values.len() != slots {
            self.keys = vec![K::default(); slots];
            self.values = vec![EMPTY; slots];
            self.shift = 64 - slots.trailing_zeros();
        } else {
            self.values.fill(EMPTY);
        }
        self.len = 0;
    }

    fn slot(&self, key: K) -> (usize, bool) {
        let mask = self.values.len() - 1;
        let mut slot = (key.hash64() >> self.shift) as usize & mask;
        loop {
            if self.values[slot] == EMPTY {
                return (slot, false);
            }
            if self.keys[slot] == key {
                return (slot, true);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The value of `key`, inserting `make(len)` first if it is absent. At most the count
    /// given to `reset` keys may be inserted.
    pub fn entry(&mut self, key: K, make: impl FnOnce(usize) -> u32) -> &mut u32 {
        let (slot, found) = self.slot(key);
        if !found {
            self.keys[slot] = key;
            self.values[slot] = make(self.len);
            self.len += 1;
        }
        &mut self.values[slot]
    }

    pub fn get_mut(&mut self, key: K) -> Option<&mut u32> {
        if self.values.is_empty() {
            return None;
        }
        match self.slot(key) {
            (slot, true) => Some(&mut self.values[slot]),
            _ => None,
        }
    }
}

impl<K: Key> Default for Table<K> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_finds_and_resets() {
        let mut table = Table::<u128>::new();
        table.reset(100);
        for key in 0..100u128 {
            assert_eq!(*table.entry(key << 64 | key, |len| len as u32), key as u32);
        }
        for key in 0..100u128 {
            assert_eq!(table.get_mut(key << 64 | key).copied(), Some(key as u32));
        }
        assert!(table.get_mut(7).is_none());
        table.reset(100);
        assert!(table.get_mut(0).is_none());
        let mut empty = Table::<u32>::new();
        assert!(empty.get_mut(3).is_none());
    }
}
