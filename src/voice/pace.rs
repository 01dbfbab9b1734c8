//! How the voice stays ahead of playback: what a phrase costs to synthesise on this machine and
//! how much speech it gives, learned as the voice speaks (the [`super::Speaker`] keeps it from
//! one reply to the next, and measures it once when it warms up), and the plan that follows:
//! how long each phrase may be, and the pause a phrase needs to be ready in time.
//!
//! A phrase costs ~0.30 s of synthesis plus ~0.018 s per phoneme symbol on the reference machine
//! (docs/PERFORMANCE.md, "Voice"), whatever its length, so short phrases are dear: the first one
//! is short for a quick first sound, and each later one fills most of the time left before the
//! queue runs dry. On a slow machine the first phrase is longer, so that the second can be ready
//! with at most a short planned pause.

/// Synthesis time every phrase costs whatever its length (its padding frames and final
/// lengthening), on the reference machine; the per-symbol part is learned.
const PHRASE_OVERHEAD_S: f64 = 0.30;
/// Budget of the first phrase on a machine fast enough: two short words.
const FIRST_PHRASE: usize = 10;
/// The smallest later phrase: big enough that it synthesises faster than it plays.
const GROWING_PHRASE: usize = 22;
/// Largest phrase (symbols); bigger ones gain nothing and make Stop and errors coarser.
pub(super) const LARGEST_PHRASE: usize = 300;
/// Longest pause the voice may plan between two words to stay ahead of playback.
const MAX_PLANNED_PAUSE_S: f64 = 0.4;
/// A phrase is planned to take this much more than its predicted cost.
const COST_MARGIN: f64 = 1.15;
/// Time kept in hand beyond a phrase's planned cost (tokenising, the thread waking up).
const SLACK_S: f64 = 0.03;

/// The cost model, learned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// Seconds of synthesis per phoneme symbol beyond the overhead.
    per_symbol: f64,
    /// Seconds of speech (edges trimmed) a phoneme symbol gives.
    speech_per_symbol: f64,
}

impl Default for Pace {
    fn default() -> Self {
        Pace {
            per_symbol: 0.022,
            speech_per_symbol: 0.06,
        }
    }
}

impl Pace {
    /// Predicted seconds of synthesis for a phrase of `symbols`.
    pub fn cost(&self, symbols: usize) -> f64 {
        PHRASE_OVERHEAD_S + self.per_symbol * symbols as f64
    }

    /// The first phrase's budget (symbols): short for a quick first sound, but long enough that
    /// a growing second phrase can be ready before it has played, give or take the longest
    /// planned pause.
    pub fn first_budget(&self) -> usize {
        let speech_needed = COST_MARGIN * self.cost(GROWING_PHRASE) - MAX_PLANNED_PAUSE_S + SLACK_S;
        ((speech_needed / self.speech_per_symbol).ceil().max(0.0) as usize)
            .clamp(FIRST_PHRASE, LARGEST_PHRASE)
    }

    /// A later phrase's budget, with `left` seconds queued and not yet played: what fills 70 %
    /// of it, never less than a phrase that gains on playback.
    pub fn budget(&self, left: f64) -> usize {
        ((left * 0.7 - PHRASE_OVERHEAD_S) / self.per_symbol.max(1e-3))
            .clamp(GROWING_PHRASE as f64, LARGEST_PHRASE as f64) as usize
    }

    /// The pause (seconds) to queue before a phrase of `symbols` so that it is ready before the
    /// queue, `left` seconds of it, runs dry: none when it will be, at most the longest planned.
    pub fn pause_before(&self, symbols: usize, left: f64) -> f64 {
        (COST_MARGIN * self.cost(symbols) - left + SLACK_S).clamp(0.0, MAX_PLANNED_PAUSE_S)
    }

    /// Learn from a phrase of `symbols` that took `synth_s` and gave `speech_s` of speech. Cost
    /// rises at once and falls slowly (short phrases understate long ones, and the slow end of
    /// a busy machine is what the plan must survive); speech per symbol the other way round.
    pub fn learn(&mut self, symbols: usize, synth_s: f64, speech_s: f64) {
        let symbols = symbols.max(1) as f64;
        let per_symbol = ((synth_s - PHRASE_OVERHEAD_S) / symbols).max(1e-3);
        self.per_symbol = if per_symbol > self.per_symbol {
            per_symbol
        } else {
            0.8 * self.per_symbol + 0.2 * per_symbol
        };
        if speech_s > 0.0 {
            let speech = speech_s / symbols;
            self.speech_per_symbol = if speech < self.speech_per_symbol {
                speech
            } else {
                0.8 * self.speech_per_symbol + 0.2 * speech
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fast_machine_starts_with_two_short_words() {
        let mut pace = Pace::default();
        pace.learn(20, 0.30 + 20.0 * 0.012, 1.3);
        assert_eq!(pace.first_budget(), FIRST_PHRASE);
    }

    #[test]
    fn a_slow_machine_starts_with_a_phrase_the_second_can_follow() {
        // The CI VM under load: "tə bˈI mˈɪlk ænd" (16 symbols) took 1.03 s for ~1.1 s of speech.
        let mut pace = Pace::default();
        pace.learn(16, 1.03, 1.1);
        let first = pace.first_budget();
        assert!(first > FIRST_PHRASE, "{first}");
        // Its speech plus the longest pause covers the second phrase's planned cost.
        let second = GROWING_PHRASE;
        let speech = first as f64 * pace.speech_per_symbol;
        assert!(speech + MAX_PLANNED_PAUSE_S - SLACK_S >= COST_MARGIN * pace.cost(second));
    }

    #[test]
    fn cost_rises_at_once_and_falls_slowly() {
        let mut pace = Pace::default();
        pace.learn(10, 0.30 + 10.0 * 0.05, 0.6);
        assert!((pace.per_symbol - 0.05).abs() < 1e-9);
        pace.learn(10, 0.30 + 10.0 * 0.01, 0.6);
        assert!(pace.per_symbol > 0.04, "{pace:?}");
    }

    #[test]
    fn budgets_grow_with_the_queue_and_stay_bounded() {
        let pace = Pace::default();
        assert_eq!(pace.budget(0.0), GROWING_PHRASE);
        assert!(pace.budget(3.0) > pace.budget(1.5));
        assert_eq!(pace.budget(1e6), LARGEST_PHRASE);
        assert_eq!(pace.pause_before(10, 100.0), 0.0);
    }
}
