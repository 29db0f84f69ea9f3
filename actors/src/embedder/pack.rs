//! Packing token sequences into llama.cpp decode calls.
//!
//! One decode per text wastes the matrix units on tiny inputs; one decode
//! for everything makes attention (quadratic in the tokens of a decode for
//! encoder models, which attend across the whole micro-batch under a mask)
//! dominate for long texts. So sequences are packed greedily, in order,
//! into groups of at most `max_tokens` tokens and `max_seqs` sequences.

/// Groups of indices into `lengths`, each group one decode call. A
/// sequence longer than `max_tokens` gets a group of its own.
pub(super) fn pack(lengths: &[usize], max_tokens: usize, max_seqs: usize) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut tokens = 0;
    for (i, &len) in lengths.iter().enumerate() {
        if !current.is_empty() && (tokens + len > max_tokens || current.len() >= max_seqs) {
            groups.push(std::mem::take(&mut current));
            tokens = 0;
        }
        current.push(i);
        tokens += len;
    }
    if !current.is_empty() {
        groups.push(current);
    }
    groups
}

/// Splits `n` items into at most `parts` contiguous, near-equal ranges by
/// cumulative `weights` (token counts), for spreading a batch over workers.
pub(super) fn split_by_weight(weights: &[usize], parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.max(1).min(weights.len().max(1));
    let total: usize = weights.iter().sum();
    let mut ranges = Vec::new();
    let mut start = 0;
    let mut acc = 0;
    for (i, w) in weights.iter().enumerate() {
        acc += w;
        let boundary = total * (ranges.len() + 1) / parts;
        if acc >= boundary && ranges.len() + 1 < parts {
            ranges.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < weights.len() || ranges.is_empty() {
        ranges.push(start..weights.len());
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_in_order_within_budgets() {
        assert_eq!(pack(&[10, 10, 10], 25, 8), vec![vec![0, 1], vec![2]]);
        assert_eq!(pack(&[10, 10, 10], 100, 2), vec![vec![0, 1], vec![2]]);
        assert_eq!(pack(&[600, 5], 512, 8), vec![vec![0], vec![1]]);
        assert!(pack(&[], 512, 8).is_empty());
    }

    #[test]
    fn splits_by_weight() {
        assert_eq!(split_by_weight(&[1, 1, 1, 1], 2), vec![0..2, 2..4]);
        assert_eq!(split_by_weight(&[1, 1, 1], 1), vec![0..3]);
        assert_eq!(split_by_weight(&[5], 4), vec![0..1]);
        assert_eq!(split_by_weight(&[9, 1, 1, 1], 2), vec![0..1, 1..4]);
        let ranges = split_by_weight(&[3; 10], 3);
        assert_eq!(ranges.iter().map(|r| r.len()).sum::<usize>(), 10);
        assert_eq!(ranges.len(), 3);
    }
}
