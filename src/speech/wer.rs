//! Word error rate: how far a transcript is from what was said, in words.
//!
//! `(substitutions + deletions + insertions) / words said`, after both texts are normalised the
//! same way: lower case, punctuation dropped, numbers up to 99 spelled out (whisper writes "9"
//! for "nine"), hyphens split.

/// Lower-case words without punctuation, numbers spelled out.
pub fn normalise(text: &str) -> Vec<String> {
    let lower = text.to_lowercase().replace(['-', '—', '/'], " ");
    lower
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .replace(['.', ',', '!', '?', '"', ';', ':'], "")
        })
        .filter(|w| !w.is_empty())
        .flat_map(|w| match w.parse::<u32>() {
            Ok(n) if n < 100 => spell(n).split(' ').map(String::from).collect::<Vec<_>>(),
            _ => vec![w],
        })
        .collect()
}

fn spell(n: u32) -> String {
    const ONES: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    match n {
        0..=19 => ONES[n as usize].into(),
        _ if n % 10 == 0 => TENS[(n / 10) as usize].into(),
        _ => format!("{} {}", TENS[(n / 10) as usize], ONES[(n % 10) as usize]),
    }
}

/// Word-level edit distance between what was said and what was heard.
pub fn errors(reference: &[String], hypothesis: &[String]) -> usize {
    let mut prev: Vec<usize> = (0..=hypothesis.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut cur = vec![i + 1; hypothesis.len() + 1];
        for (j, h) in hypothesis.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(r != h))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[hypothesis.len()]
}

/// Word error rate of one transcript (0 when both are empty).
pub fn word_error_rate(reference: &str, hypothesis: &str) -> f64 {
    let (r, h) = (normalise(reference), normalise(hypothesis));
    if r.is_empty() {
        return if h.is_empty() { 0.0 } else { 1.0 };
    }
    errors(&r, &h) as f64 / r.len() as f64
}

/// Word error rate over many pairs: total errors over total words said.
pub fn corpus_wer<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> f64 {
    let (mut errs, mut words) = (0usize, 0usize);
    for (r, h) in pairs {
        let (r, h) = (normalise(r), normalise(h));
        errs += errors(&r, &h);
        words += r.len();
    }
    if words == 0 {
        0.0
    } else {
        errs as f64 / words as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_substitutions_deletions_and_insertions() {
        assert_eq!(word_error_rate("buy milk today", "buy milk today"), 0.0);
        assert_eq!(word_error_rate("buy milk today", "by milk"), 2.0 / 3.0);
        assert_eq!(word_error_rate("buy milk", "buy some milk"), 0.5);
        assert_eq!(word_error_rate("At nine, Thursday.", "at 9 thursday"), 0.0);
        assert_eq!(word_error_rate("twenty-one cats", "21 cats"), 0.0);
        assert_eq!(corpus_wer([("a b", "a"), ("c d", "c d")]), 0.25);
    }
}
