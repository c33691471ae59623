//! The routing benchmark's synthetic contextual bandit, shared by `benches/routing.rs` (how
//! well the online head learns from its own choices) and `benches/jobs.rs` (the outcome log a
//! training job learns from).

#![allow(dead_code)] // each benchmark uses part of this

use rand::rngs::StdRng;
use rand::Rng;

/// Embedding dimension of the bandit (that of the built-in embedder).
pub const BANDIT_DIM: usize = 384;
/// Request clusters where cosine picks the right skill, and where it is misled (see [`Bandit`]).
const HONEST_CLUSTERS: usize = 8;
const MISLEADING_CLUSTERS: usize = 4;
/// Skills that are right for no cluster; some serve as decoys.
const DISTRACTOR_SKILLS: usize = 8;
/// Chance that the right skill for a cluster helps, and that any other skill does.
const RIGHT_SKILL_SUCCESS: f64 = 0.9;
const WRONG_SKILL_SUCCESS: f64 = 0.1;

/// The synthetic contextual bandit: request clusters, skills, and who helps whom.
///
/// Skills and cluster directions are orthonormal, so the designed cosines hold exactly. An
/// *honest* cluster's centre has cosine 0.6 with the cluster's right skill and 0 with every
/// other. A *misleading* cluster's centre has cosine 0.45 with a decoy and 0.40 with its right
/// skill; after per-request noise the gap is about the size of the noise, so cosine routing picks
/// the decoy about nine times in ten. Half the decoys are distractor skills that are right for no
/// cluster (their track record can give them away); the other half are the right skills of
/// honest clusters, which only a model of the request–skill pair can tell apart. The right skill
/// helps with probability 0.9, any other with 0.1.
pub struct Bandit {
    /// Unit skill embeddings; skill `i` is the right one for cluster `i`.
    pub skills: Vec<Vec<f32>>,
    /// Unnormalised cluster centres; a request adds noise and normalises.
    pub centres: Vec<Vec<f32>>,
}

impl Bandit {
    pub fn new(rng: &mut StdRng) -> Self {
        let cluster_count = HONEST_CLUSTERS + MISLEADING_CLUSTERS;
        let skill_count = cluster_count + DISTRACTOR_SKILLS;
        let directions = orthonormal_directions(rng, skill_count + cluster_count);
        let (skills, own_directions) = directions.split_at(skill_count);
        let mut centres = Vec::new();
        for cluster in 0..cluster_count {
            let centre = if cluster < HONEST_CLUSTERS {
                combine(&[(0.6, &skills[cluster]), (0.8, &own_directions[cluster])])
            } else {
                let misleading_index = cluster - HONEST_CLUSTERS;
                let decoy = if misleading_index.is_multiple_of(2) {
                    misleading_index / 2 // the right skill of an honest cluster
                } else {
                    cluster_count + misleading_index / 2 // a distractor
                };
                combine(&[
                    (0.50, &skills[cluster]),
                    (0.56, &skills[decoy]),
                    (1.0, &own_directions[cluster]),
                ])
            };
            centres.push(centre);
        }
        Bandit {
            skills: skills.to_vec(),
            centres,
        }
    }

    /// A request from `cluster`: its centre plus noise half its length, normalised.
    pub fn request(&self, rng: &mut StdRng, cluster: usize) -> Vec<f32> {
        let noise = unit(random_gaussian(rng, BANDIT_DIM));
        let centre_length = self.centres[cluster]
            .iter()
            .map(|x| x * x)
            .sum::<f32>()
            .sqrt();
        unit(combine(&[
            (1.0, &self.centres[cluster]),
            (0.5 * centre_length, &noise),
        ]))
    }

    /// Skill `cluster` is the right one for cluster `cluster`.
    pub fn success_chance(cluster: usize, skill: usize) -> f64 {
        if skill == cluster {
            RIGHT_SKILL_SUCCESS
        } else {
            WRONG_SKILL_SUCCESS
        }
    }
}

pub fn random_gaussian(rng: &mut StdRng, dim: usize) -> Vec<f32> {
    (0..dim)
        .map(|_| {
            // Box–Muller: rand 0.9 alone has no normal distribution.
            let radius = (-2.0 * (1.0 - rng.random::<f32>()).ln()).sqrt();
            radius * (std::f32::consts::TAU * rng.random::<f32>()).cos()
        })
        .collect()
}

/// `count` random orthonormal vectors (Gram–Schmidt), so the bandit's cosines are as designed.
fn orthonormal_directions(rng: &mut StdRng, count: usize) -> Vec<Vec<f32>> {
    let mut directions: Vec<Vec<f32>> = Vec::with_capacity(count);
    while directions.len() < count {
        let mut candidate = random_gaussian(rng, BANDIT_DIM);
        for direction in &directions {
            let overlap: f32 = candidate.iter().zip(direction).map(|(a, b)| a * b).sum();
            candidate
                .iter_mut()
                .zip(direction)
                .for_each(|(value, along)| *value -= overlap * along);
        }
        directions.push(unit(candidate));
    }
    directions
}

fn unit(vector: Vec<f32>) -> Vec<f32> {
    let length = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    vector.into_iter().map(|x| x / length).collect()
}

fn combine(terms: &[(f32, &Vec<f32>)]) -> Vec<f32> {
    let mut sum = vec![0.0f32; terms[0].1.len()];
    for (weight, vector) in terms {
        for (total, value) in sum.iter_mut().zip(vector.iter()) {
            *total += weight * value;
        }
    }
    sum
}
