//! From what the simulated server recorded to the figures of the report.
//!
//! Reviews are counted per submitted snapshot. A snapshot is *covered* once a review of it, or
//! of any snapshot of the same session at least as long, decodes to its end: that transcript
//! holds this one, so nothing of it is left to learn. (An earlier snapshot as long is the same
//! conversation submitted again; Lull completes such a review without the model.) Its *delay*
//! runs from its submission to that moment, or is zero if that came first; a snapshot never
//! covered by the end of the drain window is *lost*.
//!
//! Delay is reported twice (DESIGN §7). In `delay_p50_s` / `delay_p95_s` a lost snapshot still
//! has a delay: the time it had waited when the run ended, a lower bound of a delay that never
//! ends; leaving it out there would let a policy improve its percentiles by losing its slowest
//! reviews. But that same rule lets a policy that loses nothing win the median on the losses of
//! another, so `delay_delivered_p50_s` / `_p95_s` rank only the `delivered` (covered) snapshots:
//! what a review that does arrive waits.

use std::collections::HashMap;

use serde::Serialize;
use tokio::time::Instant;

use super::server::Tally;

/// One policy's figures; the fields are the `latest.json` contract (issue 6's six, and issue 16's
/// `delivered`, `delay_delivered_p50_s`, `delay_delivered_p95_s`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyMetrics {
    /// Seconds of learning on the server overlapping a live turn (reported or not): a learning
    /// request's prompt reading, until the server has read it even if the client went, and its
    /// answer.
    pub contention_s: f64,
    /// Snapshots never covered by a finished review.
    pub lost: u64,
    /// Median seconds from submission to coverage; a lost snapshot counts with the time it had
    /// waited when the run ended.
    pub delay_p50_s: f64,
    /// 95th percentile of the same.
    pub delay_p95_s: f64,
    /// Snapshots covered by a finished review (submitted minus `lost`).
    pub delivered: u64,
    /// Median seconds from submission to coverage over the delivered snapshots only.
    pub delay_delivered_p50_s: f64,
    /// 95th percentile of the same.
    pub delay_delivered_p95_s: f64,
    /// Seconds of learning thrown away by preemption, until the server let the slot go (a dropped
    /// prompt's reading to its end included).
    pub wasted_s: f64,
    /// Requests to the managed server: probe reads plus review requests (the prompt's steps
    /// included).
    pub server_requests: u64,
    /// The details behind the figures, for the table (not part of the JSON contract).
    #[serde(skip)]
    pub detail: PolicyDetail,
}

/// Counts behind a policy's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicyDetail {
    /// Readings of the server (one `GET /slots` each, after Lull's first of a process).
    pub probe_reads: u64,
    /// The HTTP requests those readings cost.
    pub probe_requests: u64,
    /// Probe reads made while a review decoded (checking for preemption).
    pub probe_reads_running: u64,
    /// Probe reads at a review's checkpoints between two prompt steps (one `GET /slots` each).
    pub probe_reads_between_steps: u64,
    /// Chat requests of reviews: one per review run.
    pub llm_requests: u64,
    /// Requests that had the server read a prompt in steps before its chat request.
    pub prompt_requests: u64,
    /// Review requests dropped by preemption.
    pub preemptions: u64,
    /// Seconds of learning cut off by restarts.
    pub killed_s: f64,
    /// Snapshots submitted.
    pub submitted: u64,
}

impl PolicyMetrics {
    /// Server requests per snapshot a finished review covered: what learning cost the server
    /// per review it actually delivered (a policy that loses reviews also spends nothing more
    /// on them).
    pub fn requests_per_covered_review(&self) -> f64 {
        self.per_delivered(self.server_requests)
    }

    /// The same, split into readings of the server, prompt steps (with the routes that plan
    /// them) and chat requests, which add up to it.
    pub fn requests_per_covered_review_split(&self) -> (f64, f64, f64) {
        (
            self.per_delivered(self.detail.probe_requests),
            self.per_delivered(self.detail.prompt_requests),
            self.per_delivered(self.detail.llm_requests),
        )
    }

    fn per_delivered(&self, requests: u64) -> f64 {
        requests as f64 / self.delivered.max(1) as f64
    }
}

pub(crate) fn measure(tally: &Tally) -> PolicyMetrics {
    // Latest completion per session does not suffice (an old snapshot may finish after a newer
    // one was queued), so keep every completion and take the earliest that covers.
    let mut completions: HashMap<&str, Vec<(usize, Instant)>> = HashMap::new();
    for &(snapshot, at) in &tally.completions {
        let session = tally.snapshots[snapshot].session.as_str();
        completions.entry(session).or_default().push((snapshot, at));
    }
    let mut delays = Vec::new();
    let mut delivered_delays = Vec::new();
    let mut lost = 0;
    for (index, snapshot) in tally.snapshots.iter().enumerate() {
        let covered = completions
            .get(snapshot.session.as_str())
            .into_iter()
            .flatten()
            .filter(|(done, _)| *done >= index || tally.snapshots[*done].turns >= snapshot.turns)
            .map(|(_, at)| (*at).max(snapshot.submitted))
            .min();
        let done = covered.unwrap_or_else(|| {
            lost += 1;
            tally.ended
        });
        let delay = (done - snapshot.submitted).as_secs_f64();
        delays.push(delay);
        if covered.is_some() {
            delivered_delays.push(delay);
        }
    }
    delays.sort_by(f64::total_cmp);
    delivered_delays.sort_by(f64::total_cmp);
    PolicyMetrics {
        contention_s: round(tally.contention_s),
        lost,
        delay_p50_s: round(percentile(&delays, 0.50)),
        delay_p95_s: round(percentile(&delays, 0.95)),
        delivered: delivered_delays.len() as u64,
        delay_delivered_p50_s: round(percentile(&delivered_delays, 0.50)),
        delay_delivered_p95_s: round(percentile(&delivered_delays, 0.95)),
        wasted_s: round(tally.wasted_s),
        server_requests: tally.probe_requests + tally.llm_requests + tally.prompt_requests,
        detail: PolicyDetail {
            probe_reads: tally.probe_reads,
            probe_requests: tally.probe_requests,
            probe_reads_running: tally.probe_reads_running,
            probe_reads_between_steps: tally.probe_reads_between_steps,
            llm_requests: tally.llm_requests,
            prompt_requests: tally.prompt_requests,
            preemptions: tally.preemptions,
            killed_s: round(tally.killed_s),
            submitted: tally.snapshots.len() as u64,
        },
    }
}

/// Nearest-rank percentile of sorted values; 0 when there are none.
fn percentile(sorted: &[f64], quantile: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (quantile * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Two decimals: the simulator's resolution is far coarser than a float's.
fn round(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::server::Snapshot;
    use super::*;

    #[test]
    fn a_lost_snapshot_counts_with_what_it_waited_until_the_end() {
        let start = Instant::now();
        let at = |s: u64| start + Duration::from_secs(s);
        let snapshot = |session: &str, submitted: u64| Snapshot {
            session: session.into(),
            submitted: at(submitted),
            turns: 4,
            decode: Duration::from_secs(28),
        };
        let tally = Tally {
            contention_s: 0.0,
            wasted_s: 0.0,
            killed_s: 0.0,
            probe_reads: 0,
            probe_requests: 0,
            probe_reads_running: 0,
            probe_reads_between_steps: 0,
            llm_requests: 0,
            prompt_requests: 0,
            preemptions: 0,
            snapshots: vec![snapshot("a", 0), snapshot("b", 0), snapshot("c", 900)],
            completions: vec![(0, at(10)), (1, at(30))],
            ended: at(1000),
        };
        let metrics = measure(&tally);
        assert_eq!(metrics.lost, 1);
        // 10, 30 and the lost one's 100: without it the median would be 10.
        assert_eq!(metrics.delay_p50_s, 30.0);
        assert_eq!(metrics.delay_p95_s, 100.0);
        // Over the delivered two only.
        assert_eq!(metrics.delivered, 2);
        assert_eq!(metrics.delay_delivered_p50_s, 10.0);
        assert_eq!(metrics.delay_delivered_p95_s, 30.0);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&values, 0.5), 10.0);
        assert_eq!(percentile(&values, 0.95), 19.0);
        assert_eq!(percentile(&[3.0], 0.95), 3.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
