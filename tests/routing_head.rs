//! The routing head (issue 5, DESIGN §2.3), checked through its public API:
//!
//! - the model: a hand-computed forward pass, the warm-up blend, the update direction, the
//!   score floor of a failure's step, a refused non-finite step, an exploring agent;
//! - the split, cached first layer against the scalar reference, across updates and skill edits,
//!   and the update against the scalar REINFORCE step;
//! - sharing: no lost update across 8 concurrent sessions, the save signal, one-lock snapshots;
//! - snapshots: byte round-trip, reload, and every kind of bad blob;
//! - the built-in embedder behind the async trait.

use std::sync::Arc;

use futures_util::FutureExt;
use lull::routing::reference::{rank_scalar, reinforce_step_scalar, ReferenceSkill};
use lull::routing::{
    Embedder, HashedEmbedder, HeadConfig, HeadSnapshot, Outcome, RoutingError, RoutingHead,
    SharedRoutingHead, SkillStats, SnapshotError, REINFORCE_SCORE_FLOOR,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

// ---------------------------------------------------------------------------------------------
// Helpers

fn random_vector(rng: &mut StdRng, dim: usize) -> Vec<f32> {
    (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// A head with `skill_count` random skills named `skill-N`.
fn head_with_random_skills(
    dim: usize,
    skill_count: usize,
    config: HeadConfig,
    rng: &mut StdRng,
) -> RoutingHead {
    let mut head = RoutingHead::new(dim, config);
    for index in 0..skill_count {
        head.upsert_skill(&format!("skill-{index}"), &random_vector(rng, dim))
            .unwrap();
    }
    head
}

fn rl_of(head: &RoutingHead, query: &[f32], skill: &str) -> f32 {
    let ranking = head.rank(query, head.skill_count()).unwrap();
    ranking
        .ranked
        .iter()
        .find(|ranked| ranked.skill == skill)
        .unwrap()
        .rl
}

/// A 2-dimensional, 2-unit head whose every number is written out, so the expected scores can
/// be worked out by hand (see `forward_pass_matches_hand_computed_example`).
fn hand_written_head(update_count: u64) -> RoutingHead {
    let snapshot = HeadSnapshot {
        dim: 2,
        hidden_size: 2,
        // Columns: query (2), skill (2), cosine, success rate, ln(1+uses)/LOG_USES_SCALE.
        first_layer: vec![
            1.0, 0.0, 0.0, 1.0, 0.5, 1.0, 0.0, // unit 0
            0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 5.0, // unit 1
        ],
        first_bias: vec![0.0, 0.3],
        output: vec![0.5, 2.0],
        output_bias: -1.0,
        baseline: 0.0,
        update_count,
    };
    let mut head = RoutingHead::from_snapshot(HeadConfig::default(), &snapshot).unwrap();
    head.upsert_skill("a", &[1.0, 0.0]).unwrap();
    head.upsert_skill("b", &[0.0, 2.0]).unwrap();
    head.set_skill_stats(
        "b",
        SkillStats {
            uses: 3,
            successes: 2,
        },
    );
    head
}

// ---------------------------------------------------------------------------------------------
// The model

#[test]
fn forward_pass_matches_hand_computed_example() {
    let head = hand_written_head(100);
    let ranking = head.rank(&[3.0, 4.0], 2).unwrap();
    // query [3,4] → [0.6, 0.8].
    // b: skill [0,1], cosine 0.8, success rate 3/5 = 0.6, ln(4)/ln(1001) = 0.200658.
    //    unit 0: 0.6 + 1 + 0.5·0.8 + 0.6 = 2.6; unit 1: −0.8 + 5·0.200658 + 0.3 = 0.503288.
    //    z = 0.5·2.6 + 2·0.503288 − 1 = 1.306576, rl = 0.786940, score = 0.7·0.8 + 0.3·rl = 0.796082.
    // a: skill [1,0], cosine 0.6, no uses: success rate 0.5, log-uses 0.
    //    unit 0: 0.6 + 0 + 0.5·0.6 + 0.5 = 1.4; unit 1: −0.8 + 0.3 < 0 → 0.
    //    z = 0.7 − 1 = −0.3, rl = 0.425557, score = 0.42 + 0.3·rl = 0.547667.
    let expected = [
        ("b", 0.796_082, 0.8, 0.786_940),
        ("a", 0.547_667, 0.6, 0.425_557),
    ];
    assert_eq!(ranking.ranked.len(), 2);
    for (ranked, (skill, score, cosine, rl)) in ranking.ranked.iter().zip(expected) {
        assert_eq!(ranked.skill, skill);
        assert!(
            (ranked.score - score).abs() < 1e-5,
            "{skill} score {}",
            ranked.score
        );
        assert!(
            (ranked.cosine - cosine).abs() < 1e-6,
            "{skill} cosine {}",
            ranked.cosine
        );
        assert!((ranked.rl - rl).abs() < 1e-5, "{skill} rl {}", ranked.rl);
    }
    let pass = ranking.pass_for("b").unwrap();
    assert_eq!(&pass.query[..], &[0.6, 0.8]);
    assert!((pass.hidden_pre_activation[0] - 2.6).abs() < 1e-5);
    assert!((pass.hidden_pre_activation[1] - 0.503_288).abs() < 1e-5);
    assert!((pass.features.log_uses - 4f32.ln()).abs() < 1e-6);
}

#[test]
fn warm_up_ranks_by_cosine_and_still_reports_rl() {
    // Same head as above, one update short of the default 50-update warm-up.
    let cold = hand_written_head(49);
    assert!(!cold.is_warmed_up());
    for ranked in cold.rank(&[3.0, 4.0], 2).unwrap().ranked {
        assert_eq!(ranked.score, ranked.cosine);
        assert!(
            ranked.rl > 0.4 && ranked.rl < 0.8,
            "rl is computed during warm-up"
        );
    }

    let warm = hand_written_head(50);
    assert!(warm.is_warmed_up());
    for ranked in warm.rank(&[3.0, 4.0], 2).unwrap().ranked {
        assert!((ranked.score - (0.7 * ranked.cosine + 0.3 * ranked.rl)).abs() < 1e-6);
    }
}

#[test]
fn warm_up_ends_after_the_configured_number_of_updates() {
    let mut rng = StdRng::seed_from_u64(7);
    let config = HeadConfig {
        warmup_updates: 3,
        ..HeadConfig::default()
    };
    let mut head = head_with_random_skills(16, 5, config, &mut rng);
    let query = random_vector(&mut rng, 16);
    for update in 0..3 {
        assert!(head
            .rank(&query, 5)
            .unwrap()
            .ranked
            .iter()
            .all(|ranked| ranked.score == ranked.cosine));
        let ranking = head.rank(&query, 1).unwrap();
        assert_eq!(
            head.apply_outcome(&ranking.passes[0], Outcome::Success)
                .unwrap(),
            update + 1
        );
    }
    assert!(head
        .rank(&query, 5)
        .unwrap()
        .ranked
        .iter()
        .all(|ranked| ranked.score != ranked.cosine));
}

#[test]
fn rewarded_skill_rises_and_punished_skill_falls() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut head = head_with_random_skills(32, 6, HeadConfig::default(), &mut rng);
    let query = random_vector(&mut rng, 32);
    let ranking = head.rank(&query, 6).unwrap();
    let (rewarded, punished) = (&ranking.passes[0], &ranking.passes[1]);

    let before = rl_of(&head, &query, &rewarded.skill);
    head.apply_outcome(rewarded, Outcome::Success).unwrap();
    let after = rl_of(&head, &query, &rewarded.skill);
    assert!(after > before, "rewarded: {before} → {after}");
    assert_eq!(
        head.skill_stats(&rewarded.skill),
        Some(SkillStats {
            uses: 1,
            successes: 1
        })
    );

    let pass = head
        .rank(&query, 6)
        .unwrap()
        .pass_for(&punished.skill)
        .unwrap()
        .clone();
    let before = pass.rl;
    head.apply_outcome(&pass, Outcome::Failure).unwrap();
    let after = rl_of(&head, &query, &punished.skill);
    assert!(after < before, "punished: {before} → {after}");
    assert_eq!(
        head.skill_stats(&punished.skill),
        Some(SkillStats {
            uses: 1,
            successes: 0
        })
    );
}

#[test]
fn repeated_outcomes_move_the_baseline_toward_the_reward() {
    let mut rng = StdRng::seed_from_u64(12);
    let mut head = head_with_random_skills(16, 3, HeadConfig::default(), &mut rng);
    let query = random_vector(&mut rng, 16);
    for _ in 0..100 {
        let pass = head.rank(&query, 1).unwrap().passes.remove(0);
        head.apply_outcome(&pass, Outcome::Failure).unwrap();
    }
    assert!(head.baseline() < -0.99, "baseline {}", head.baseline());
}

/// A head learning from an agent that does not always take its first skill: about one outcome
/// in five is for the second or third ranked skill, so mostly a failure.
///
/// Regression test for the REINFORCE step on a failure moving `z` down by about
/// `lr · |advantage|` however low `p` already was: the shared weights dragged every score to 0
/// and then overflowed to NaN (near 28,000 outcomes on the routing benchmark's bandit at the
/// default learning rate; here within a few thousand at ten times that rate).
#[test]
fn an_exploring_agent_keeps_the_head_finite_and_ranking_the_rewarded_skill_first() {
    const DIM: usize = 16;
    const CLUSTERS: usize = 4;
    const SKILLS: usize = 8;
    const OUTCOMES: usize = 4_000;
    let basis = |index: usize| -> Vec<f32> {
        let mut vector = vec![0.0; DIM];
        vector[index] = 1.0;
        vector
    };
    let config = HeadConfig {
        learning_rate: 0.1,
        ..HeadConfig::default()
    };
    let mut head = RoutingHead::new(DIM, config);
    for skill in 0..SKILLS {
        head.upsert_skill(&format!("skill-{skill}"), &basis(skill))
            .unwrap();
    }
    // Skill `c` helps cluster `c` (chance 0.9; any other skill 0.1), but the centre of cluster
    // `c` is a little closer to skill `c + CLUSTERS` by cosine: only the head can rank it first.
    let centres: Vec<Vec<f32>> = (0..CLUSTERS)
        .map(|cluster| {
            let (right, decoy, own) = (
                basis(cluster),
                basis(cluster + CLUSTERS),
                basis(SKILLS + cluster),
            );
            (0..DIM)
                .map(|index| 0.50 * right[index] + 0.55 * decoy[index] + 0.6 * own[index])
                .collect()
        })
        .collect();

    let mut rng = StdRng::seed_from_u64(51);
    for _ in 0..OUTCOMES {
        let cluster = rng.random_range(0..CLUSTERS);
        let query: Vec<f32> = centres[cluster]
            .iter()
            .map(|value| value + rng.random_range(-0.05f32..0.05))
            .collect();
        let ranking = head.rank(&query, 3).unwrap();
        let taken = if rng.random_bool(0.2) {
            rng.random_range(1..3)
        } else {
            0
        };
        let pass = &ranking.passes[taken];
        let success_chance = if pass.skill == format!("skill-{cluster}") {
            0.9
        } else {
            0.1
        };
        let outcome = if rng.random_bool(success_chance) {
            Outcome::Success
        } else {
            Outcome::Failure
        };
        head.apply_outcome(pass, outcome).unwrap();
    }

    let snapshot = head.snapshot();
    let weights = snapshot
        .first_layer
        .iter()
        .chain(&snapshot.first_bias)
        .chain(&snapshot.output)
        .chain([&snapshot.output_bias, &snapshot.baseline]);
    assert!(weights.into_iter().all(|weight| weight.is_finite()));
    for (cluster, centre) in centres.iter().enumerate() {
        let ranked = head.rank(centre, SKILLS).unwrap().ranked;
        assert_eq!(ranked[0].skill, format!("skill-{cluster}"), "{ranked:?}");
        assert!(ranked[0].rl > 0.5, "cluster {cluster}: {ranked:?}");
    }
}

/// The update is the scalar reference's REINFORCE step, weight for weight, on both sides of the
/// score floor: a failure of a skill scored at or below it moves no weight, but the baseline,
/// the count and the skill's stats take it.
#[test]
fn updates_follow_the_scalar_reinforce_step_above_and_below_the_floor() {
    let mut rng = StdRng::seed_from_u64(14);
    let dim = 12;
    let mut head = head_with_random_skills(dim, 6, HeadConfig::default(), &mut rng);
    // An output bias this low puts most scores below the floor (sigmoid(−5) ≈ 0.007).
    let mut low = head.snapshot();
    low.output_bias = -5.0;
    head.restore(&low).unwrap();

    let (mut floored, mut stepped) = (0, 0);
    for _ in 0..200 {
        let ranking = head.rank(&random_vector(&mut rng, dim), 6).unwrap();
        let pass = &ranking.passes[rng.random_range(0..6)];
        let outcome = if rng.random_bool(0.3) {
            Outcome::Success
        } else {
            Outcome::Failure
        };
        let before = head.snapshot();
        let stats_before = head.skill_stats(&pass.skill).unwrap();
        let expected = reinforce_step_scalar(&before, head.config(), pass, outcome);
        head.apply_outcome(pass, outcome).unwrap();
        let after = head.snapshot();

        let weights = |snapshot: &HeadSnapshot| -> Vec<f32> {
            let mut weights = snapshot.first_layer.clone();
            weights.extend(&snapshot.first_bias);
            weights.extend(&snapshot.output);
            weights.push(snapshot.output_bias);
            weights
        };
        for (actual, reference) in weights(&after).iter().zip(weights(&expected)) {
            assert!((actual - reference).abs() < 1e-6, "{actual} vs {reference}");
        }
        assert_eq!(after.baseline, expected.baseline);
        assert_eq!(after.update_count, before.update_count + 1);
        assert_eq!(
            head.skill_stats(&pass.skill).unwrap().uses,
            stats_before.uses + 1
        );
        if outcome == Outcome::Failure && pass.rl <= REINFORCE_SCORE_FLOOR {
            assert_eq!(weights(&after), weights(&before));
            floored += 1;
        } else {
            stepped += 1;
        }
    }
    assert!(
        floored > 10 && stepped > 10,
        "{floored} floored, {stepped} stepped"
    );
}

/// A step that would make a weight non-finite is refused and changes nothing: one from a
/// pass scored NaN (as every pass of a head whose weights had overflowed was), and one that
/// would overflow a weight.
#[test]
fn a_step_that_would_make_a_weight_non_finite_is_refused() {
    let mut rng = StdRng::seed_from_u64(15);
    let mut head = head_with_random_skills(8, 3, HeadConfig::default(), &mut rng);
    let pass = head
        .rank(&random_vector(&mut rng, 8), 1)
        .unwrap()
        .passes
        .remove(0);
    let refused = Err(RoutingError::NonFiniteUpdate {
        skill: pass.skill.clone(),
    });
    let mut scored_nan = pass.clone();
    scored_nan.rl = f32::NAN;
    let before = head.snapshot();
    for outcome in [Outcome::Success, Outcome::Failure] {
        assert_eq!(head.apply_outcome(&scored_nan, outcome), refused);
        assert_eq!(
            head.apply_outcome_cross_entropy(&scored_nan, outcome),
            refused
        );
    }
    assert_eq!(head.snapshot(), before);

    // Every query weight at the largest finite value, and output weights large enough that a
    // step's change to the query weights is far above the rounding of f32::MAX.
    let mut at_the_edge = before.clone();
    let width = 2 * 8 + 3;
    for (index, weight) in at_the_edge.first_layer.iter_mut().enumerate() {
        if index % width < 8 {
            *weight = f32::MAX;
        }
    }
    at_the_edge.output.fill(1e36);
    head.restore(&at_the_edge).unwrap();
    assert_eq!(head.apply_outcome(&pass, Outcome::Success), refused);
    assert_eq!(head.snapshot(), at_the_edge);
    assert_eq!(head.skill_stats(&pass.skill), Some(SkillStats::default()));
}

#[test]
fn inputs_of_another_dimension_are_refused() {
    let mut rng = StdRng::seed_from_u64(13);
    let mut head = head_with_random_skills(8, 2, HeadConfig::default(), &mut rng);
    let expected = RoutingError::DimensionMismatch {
        what: "query",
        expected: 8,
        actual: 4,
    };
    assert_eq!(head.rank(&[1.0; 4], 1).unwrap_err(), expected);
    assert!(head.upsert_skill("wide", &[1.0; 9]).is_err());

    let mut other = head_with_random_skills(4, 2, HeadConfig::default(), &mut rng);
    let foreign_pass = other.rank(&[1.0; 4], 1).unwrap().passes.remove(0);
    assert!(head.apply_outcome(&foreign_pass, Outcome::Success).is_err());
    assert_eq!(head.update_count(), 0);
    other
        .apply_outcome(&foreign_pass, Outcome::Success)
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// The cached, split first layer against the scalar reference

/// Largest difference in score, cosine or rl between the head and the reference, over all skills.
fn max_difference_from_reference(
    head: &RoutingHead,
    skills: &[(String, Vec<f32>)],
    queries: &[Vec<f32>],
) -> f32 {
    let reference_skills: Vec<ReferenceSkill<'_>> = skills
        .iter()
        .map(|(name, embedding)| ReferenceSkill {
            name,
            embedding,
            stats: head.skill_stats(name).unwrap(),
        })
        .collect();
    let snapshot = head.snapshot();
    let mut max_difference = 0.0f32;
    for query in queries {
        let from_head = head.rank(query, skills.len()).unwrap().ranked;
        let from_reference = rank_scalar(&snapshot, head.config(), query, &reference_skills);
        assert_eq!(from_head.len(), from_reference.len());
        for ranked in &from_head {
            let reference = from_reference
                .iter()
                .find(|other| other.skill == ranked.skill)
                .unwrap();
            for difference in [
                ranked.score - reference.score,
                ranked.cosine - reference.cosine,
                ranked.rl - reference.rl,
            ] {
                max_difference = max_difference.max(difference.abs());
            }
        }
    }
    max_difference
}

#[test]
fn head_matches_scalar_reference_through_updates_and_skill_edits() {
    let mut rng = StdRng::seed_from_u64(21);
    let dim = 48;
    let mut skills: Vec<(String, Vec<f32>)> = (0..40)
        .map(|index| (format!("skill-{index}"), random_vector(&mut rng, dim)))
        .collect();
    let mut head = RoutingHead::new(
        dim,
        HeadConfig {
            warmup_updates: 5,
            ..HeadConfig::default()
        },
    );
    for (name, embedding) in &skills {
        head.upsert_skill(name, embedding).unwrap();
        head.set_skill_stats(
            name,
            SkillStats {
                uses: rng.random_range(0..500),
                successes: 0,
            },
        );
    }
    let queries: Vec<Vec<f32>> = (0..4).map(|_| random_vector(&mut rng, dim)).collect();
    assert!(max_difference_from_reference(&head, &skills, &queries) < 1e-5);

    // 300 updates: past the warm-up and past one full recomputation of the skill blocks, with
    // the rank-one patches before and after it.
    for _ in 0..300 {
        let query = random_vector(&mut rng, dim);
        let ranking = head.rank(&query, 3).unwrap();
        let pass = &ranking.passes[rng.random_range(0..3)];
        let outcome = if rng.random_bool(0.4) {
            Outcome::Success
        } else {
            Outcome::Failure
        };
        head.apply_outcome(pass, outcome).unwrap();
    }
    assert!(head.is_warmed_up());
    assert!(max_difference_from_reference(&head, &skills, &queries) < 1e-5);

    // A skill re-embedded, one removed, one added.
    skills[3].1 = random_vector(&mut rng, dim);
    head.upsert_skill(&skills[3].0, &skills[3].1).unwrap();
    let (removed, _) = skills.remove(10);
    assert!(head.remove_skill(&removed));
    assert!(!head.remove_skill(&removed));
    skills.push(("newcomer".to_owned(), random_vector(&mut rng, dim)));
    head.upsert_skill("newcomer", &skills.last().unwrap().1)
        .unwrap();
    assert_eq!(head.skill_count(), 40);
    assert!(max_difference_from_reference(&head, &skills, &queries) < 1e-5);
}

#[test]
fn top_k_is_the_head_of_the_full_ranking() {
    let mut rng = StdRng::seed_from_u64(22);
    let head = head_with_random_skills(
        24,
        30,
        HeadConfig {
            warmup_updates: 0,
            ..HeadConfig::default()
        },
        &mut rng,
    );
    let query = random_vector(&mut rng, 24);
    let full = head.rank(&query, 30).unwrap();
    let top = head.rank(&query, 5).unwrap();
    assert_eq!(top.ranked, full.ranked[..5]);
    assert_eq!(top.passes, full.passes[..5]);
    assert!(full
        .ranked
        .windows(2)
        .all(|pair| pair[0].score >= pair[1].score));
    assert!(head.rank(&query, 0).unwrap().ranked.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Sharing between sessions

#[test]
fn eight_concurrent_sessions_lose_no_update() {
    const SESSIONS: usize = 8;
    const OUTCOMES_PER_SESSION: usize = 1_000;
    let mut rng = StdRng::seed_from_u64(31);
    let shared = Arc::new(SharedRoutingHead::new(head_with_random_skills(
        16,
        12,
        HeadConfig::default(),
        &mut rng,
    )));

    let handles: Vec<_> = (0..SESSIONS)
        .map(|session| {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(session as u64);
                let mut saves = Vec::new();
                for _ in 0..OUTCOMES_PER_SESSION {
                    let ranking = shared.rank(&random_vector(&mut rng, 16), 3).unwrap();
                    let outcome = if rng.random_bool(0.5) {
                        Outcome::Success
                    } else {
                        Outcome::Failure
                    };
                    let applied = shared.apply_outcome(&ranking.passes[0], outcome).unwrap();
                    if applied.persist_due {
                        let snapshot = shared.snapshot();
                        assert!(snapshot.update_count >= applied.update_count);
                        saves.push(applied.update_count);
                    }
                }
                saves
            })
        })
        .collect();
    let mut saves: Vec<u64> = handles
        .into_iter()
        .flat_map(|handle| handle.join().unwrap())
        .collect();

    let total = (SESSIONS * OUTCOMES_PER_SESSION) as u64;
    assert_eq!(shared.status().update_count, total);
    assert_eq!(shared.snapshot().update_count, total);
    // Every tenth update, and each announced to exactly one session.
    saves.sort_unstable();
    assert_eq!(
        saves,
        (1..=total / 10).map(|save| save * 10).collect::<Vec<_>>()
    );
}

#[test]
fn persist_is_due_every_interval() {
    let mut rng = StdRng::seed_from_u64(32);
    let config = HeadConfig {
        persist_interval: 10,
        ..HeadConfig::default()
    };
    let shared = SharedRoutingHead::new(head_with_random_skills(8, 3, config, &mut rng));
    let query = random_vector(&mut rng, 8);
    let due_at: Vec<u64> = (0..25)
        .filter_map(|_| {
            let pass = shared.rank(&query, 1).unwrap().passes.remove(0);
            let applied = shared.apply_outcome(&pass, Outcome::Success).unwrap();
            applied.persist_due.then_some(applied.update_count)
        })
        .collect();
    assert_eq!(due_at, [10, 20]);
}

// ---------------------------------------------------------------------------------------------
// Snapshots

/// A head that has learned a little, shared, with the skills it was built with.
fn trained_shared_head(rng: &mut StdRng) -> (SharedRoutingHead, Vec<(String, Vec<f32>)>) {
    let skills: Vec<(String, Vec<f32>)> = (0..10)
        .map(|index| (format!("skill-{index}"), random_vector(rng, 12)))
        .collect();
    let mut head = RoutingHead::new(12, HeadConfig::default());
    for (name, embedding) in &skills {
        head.upsert_skill(name, embedding).unwrap();
    }
    let shared = SharedRoutingHead::new(head);
    for _ in 0..60 {
        let pass = shared
            .rank(&random_vector(rng, 12), 1)
            .unwrap()
            .passes
            .remove(0);
        shared.apply_outcome(&pass, Outcome::Failure).unwrap();
    }
    (shared, skills)
}

#[test]
fn snapshot_round_trips_through_bytes_and_reloads_the_same_head() {
    let mut rng = StdRng::seed_from_u64(41);
    let (shared, skills) = trained_shared_head(&mut rng);
    let snapshot = shared.snapshot();
    assert_eq!(snapshot.update_count, 60);

    let decoded = HeadSnapshot::from_bytes(&snapshot.to_bytes(), 12).unwrap();
    assert_eq!(decoded, snapshot);

    // What the engine does at start: a head from the stored blob, then the skills and stats.
    let mut reloaded = RoutingHead::from_snapshot(HeadConfig::default(), &decoded).unwrap();
    for (name, embedding) in &skills {
        reloaded.upsert_skill(name, embedding).unwrap();
    }
    let mut original =
        RoutingHead::from_snapshot(HeadConfig::default(), &shared.snapshot()).unwrap();
    for (name, embedding) in &skills {
        original.upsert_skill(name, embedding).unwrap();
    }
    let query = random_vector(&mut rng, 12);
    assert_eq!(
        reloaded.rank(&query, 10).unwrap(),
        original.rank(&query, 10).unwrap()
    );
    assert_eq!(reloaded.baseline(), shared.status().baseline);
    assert!(reloaded.is_warmed_up());
}

#[test]
fn restoring_a_snapshot_into_a_live_head_keeps_its_skills() {
    let mut rng = StdRng::seed_from_u64(42);
    let (trained, skills) = trained_shared_head(&mut rng);
    let mut fresh = RoutingHead::new(12, HeadConfig::default());
    for (name, embedding) in &skills {
        fresh.upsert_skill(name, embedding).unwrap();
    }
    let fresh = SharedRoutingHead::new(fresh);
    fresh.restore(&trained.snapshot()).unwrap();
    assert_eq!(fresh.snapshot(), trained.snapshot());
    assert_eq!(fresh.status().skill_count, 10);

    // The restored head ranks with the trained weights and its own skills' (untouched) stats.
    let snapshot = trained.snapshot();
    let reference_skills: Vec<ReferenceSkill<'_>> = skills
        .iter()
        .map(|(name, embedding)| ReferenceSkill {
            name,
            embedding,
            stats: SkillStats::default(),
        })
        .collect();
    let query = random_vector(&mut rng, 12);
    let from_restored = fresh.rank(&query, 10).unwrap().ranked;
    let from_reference = rank_scalar(&snapshot, &HeadConfig::default(), &query, &reference_skills);
    for (restored, reference) in from_restored.iter().zip(&from_reference) {
        assert_eq!(restored.skill, reference.skill);
        assert!((restored.score - reference.score).abs() < 1e-5);
        assert!((restored.rl - reference.rl).abs() < 1e-5);
    }
}

#[test]
fn bad_blobs_are_rejected_with_their_reason() {
    let mut rng = StdRng::seed_from_u64(43);
    let (shared, _) = trained_shared_head(&mut rng);
    let bytes = shared.snapshot().to_bytes();

    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x01;
    assert_eq!(
        HeadSnapshot::from_bytes(&flipped, 12),
        Err(SnapshotError::ChecksumMismatch)
    );

    assert!(matches!(
        HeadSnapshot::from_bytes(&bytes[..bytes.len() - 7], 12),
        Err(SnapshotError::ChecksumMismatch)
    ));
    assert!(matches!(
        HeadSnapshot::from_bytes(&bytes[..20], 12),
        Err(SnapshotError::Truncated { .. })
    ));
    assert_eq!(
        HeadSnapshot::from_bytes(&[0u8; 200], 12),
        Err(SnapshotError::NotAHead)
    );
    assert_eq!(
        HeadSnapshot::from_bytes(&bytes, 384),
        Err(SnapshotError::DimensionMismatch {
            expected: 384,
            found: 12
        })
    );

    let mut future_version = bytes.clone();
    future_version[8] = 99;
    assert_eq!(
        HeadSnapshot::from_bytes(&future_version, 12),
        Err(SnapshotError::UnsupportedVersion {
            found: 99,
            supported: 1
        })
    );

    let mut not_finite = shared.snapshot();
    not_finite.output[0] = f32::NAN;
    assert!(matches!(
        HeadSnapshot::from_bytes(&not_finite.to_bytes(), 12),
        Err(SnapshotError::Inconsistent(_))
    ));

    let mut short_layer = shared.snapshot();
    short_layer.first_layer.pop();
    assert!(matches!(
        RoutingHead::from_snapshot(HeadConfig::default(), &short_layer),
        Err(SnapshotError::Inconsistent(_))
    ));
    assert!(matches!(
        shared.restore(&short_layer),
        Err(SnapshotError::Inconsistent(_))
    ));
}

// ---------------------------------------------------------------------------------------------
// The built-in embedder

#[test]
fn hashed_embedder_serves_the_async_trait_and_routes_by_wording() {
    let embedder: Arc<dyn Embedder> = Arc::new(HashedEmbedder::default());
    assert_eq!(embedder.dim(), 384);
    let texts = [
        "git: rebase and resolve merge conflicts",
        "bake sourdough bread",
        "rebase my branch on main",
    ]
    .map(String::from);
    let vectors = embedder
        .embed(&texts)
        .now_or_never()
        .expect("ready at once")
        .unwrap();
    assert_eq!(vectors.len(), 3);

    let mut head = RoutingHead::new(embedder.dim(), HeadConfig::default());
    head.upsert_skill("git", &vectors[0]).unwrap();
    head.upsert_skill("baking", &vectors[1]).unwrap();
    assert_eq!(head.rank(&vectors[2], 1).unwrap().ranked[0].skill, "git");
}
