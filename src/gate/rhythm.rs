//! The person's rhythm: how long they usually pause between one turn and the next.
//!
//! A settle window is one fixed guess of when the person is done. A person in quick succession
//! (3 s of thought between short turns) pauses for less than any sensible window would allow
//! learning, and one who reads each answer for 20 s pauses for longer than the default 15 s: in
//! both, learning started at the window's end meets the person's next turn, which then waits
//! for the prompt step being read. So the gate keeps the recent pauses (from the end of the
//! person's activity to the next start) and waits, besides the settle window, until the quiet
//! has outlasted nearly all of them: a lull is a pause longer than the person's usual one.
//!
//! Pauses longer than [`BURST_PAUSE_CAP`] are breaks, not the rhythm of a burst, and are not
//! kept: one lunch break must not hold learning back for an hour afterwards. The rhythm lives
//! in memory; after a start the gate knows none until the person has paused a few times.

use std::collections::VecDeque;
use std::time::Duration;

/// Pauses kept: the recent rhythm, not the whole day's.
const KEPT: usize = 32;
/// Pauses needed before the rhythm is trusted.
const MIN_PAUSES: usize = 3;
/// Longer pauses are breaks and are not kept.
const BURST_PAUSE_CAP: Duration = Duration::from_secs(60);
/// The share of kept pauses the quiet must outlast.
const QUANTILE: f64 = 0.9;
/// The quiet needed is the quantile's pause times this: a person's pauses vary.
const MARGIN: f64 = 1.5;

/// The recent pauses between the person's turns.
#[derive(Debug, Default)]
pub(crate) struct Rhythm {
    pauses: VecDeque<Duration>,
}

impl Rhythm {
    /// The person paused for `pause` before their next turn.
    pub(crate) fn paused(&mut self, pause: Duration) {
        if pause > BURST_PAUSE_CAP {
            return;
        }
        if self.pauses.len() == KEPT {
            self.pauses.pop_front();
        }
        self.pauses.push_back(pause);
    }

    /// The quiet after which the person's next turn is no longer likely: their usual pause
    /// (the [`QUANTILE`] of the kept ones) with a [`MARGIN`]; `None` until [`MIN_PAUSES`] are
    /// known.
    pub(crate) fn usual_quiet(&self) -> Option<Duration> {
        if self.pauses.len() < MIN_PAUSES {
            return None;
        }
        let mut sorted: Vec<Duration> = self.pauses.iter().copied().collect();
        sorted.sort();
        let rank = ((sorted.len() - 1) as f64 * QUANTILE).ceil() as usize;
        Some(sorted[rank].mul_f64(MARGIN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn the_usual_quiet_outlasts_nearly_every_recent_pause() {
        let mut rhythm = Rhythm::default();
        rhythm.paused(secs(3.0));
        rhythm.paused(secs(3.2));
        assert_eq!(rhythm.usual_quiet(), None, "two pauses are no rhythm yet");
        rhythm.paused(secs(2.8));
        assert_eq!(rhythm.usual_quiet(), Some(secs(3.2 * MARGIN)));
        // Ten pauses: the 90th percentile is the ninth, so one long pause of ten is an outlier.
        for _ in 0..6 {
            rhythm.paused(secs(3.0));
        }
        rhythm.paused(secs(20.0));
        assert_eq!(rhythm.usual_quiet(), Some(secs(20.0 * MARGIN)));
        rhythm.paused(secs(3.0));
        assert_eq!(rhythm.usual_quiet(), Some(secs(3.2 * MARGIN)));
    }

    #[test]
    fn breaks_are_not_the_rhythm_and_old_pauses_age_out() {
        let mut rhythm = Rhythm::default();
        for _ in 0..5 {
            rhythm.paused(secs(4.0));
        }
        rhythm.paused(BURST_PAUSE_CAP + secs(1.0));
        assert_eq!(rhythm.usual_quiet(), Some(secs(4.0 * MARGIN)));
        for _ in 0..KEPT {
            rhythm.paused(secs(10.0));
        }
        assert_eq!(rhythm.usual_quiet(), Some(secs(10.0 * MARGIN)));
    }
}
