//! Row ids that say nothing about volume: no global counter, so an id seen
//! by one user tells nothing about how many meals or workouts others logged.
//! All stay below 2^53, so every JSON number reader gets them exactly.

/// Milliseconds since 2024-01-01 (40 bits, until 2058) then 13 random bits:
/// ids still sort by creation (the day's meals and workouts keep their
/// order). Two rows made in the same millisecond collide with odds 1/8192;
/// inserts say `ON CONFLICT (id) DO NOTHING` and try a fresh id.
pub(crate) fn time_ordered() -> i64 {
    const EPOCH_2024_MS: i64 = 1_704_067_200_000;
    let ms = (chrono::Utc::now().timestamp_millis() - EPOCH_2024_MS).clamp(0, (1 << 40) - 1);
    (ms << 13) | i64::from(rand::random::<u16>() & 0x1fff)
}

/// 53 random bits (never 0), for rows ordered by something else (sets by
/// their number, items by position).
pub(crate) fn random() -> i64 {
    ((rand::random::<u64>() >> 11) as i64).max(1)
}

/// How many fresh ids an insert tries before giving up.
pub(crate) const ATTEMPTS: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_json_safe_and_not_counters() {
        let a = time_ordered();
        let b = time_ordered();
        assert!(a > 1 << 40 && a < 1 << 53 && b < 1 << 53);
        let r: Vec<i64> = (0..100).map(|_| random()).collect();
        assert!(r.iter().all(|&x| x > 0 && x < 1 << 53));
        let mut sorted = r.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), 100);
    }
}
