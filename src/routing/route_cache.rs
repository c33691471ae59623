//! The forward passes of recent routes, kept in memory until their outcome arrives.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

use super::head::ForwardPass;

/// Bounds of the route cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteCacheLimits {
    /// How long after ranking an outcome is still taken.
    pub ttl: Duration,
    /// Routes remembered at most (decided ones included, which cost a few bytes each).
    pub max_routes: usize,
    /// Forward passes kept at most over all undecided routes: each holds the skill's embedding
    /// and the hidden layer, about 2 KB at 384 dimensions.
    pub max_passes: usize,
}

/// One cached route.
#[derive(Debug)]
pub(crate) struct CachedRoute {
    /// Which head ranked it ([`super::service`] bumps the epoch when it replaces the head).
    /// A route of an older epoch keeps its passes: its outcome is still logged, as the
    /// training example it is, though it trains no head.
    pub epoch: u64,
    /// When it was ranked.
    pub created: Instant,
    /// The ranked candidates' passes, best first; emptied once the outcome is learned.
    pub passes: Vec<ForwardPass>,
    /// An outcome was taken (or is being stored right now).
    pub decided: bool,
}

/// What the cache says about a route id.
pub(crate) enum Lookup<'a> {
    /// Not in the cache (never routed, expired, or pushed out).
    Missing,
    /// In the cache.
    Found(&'a mut CachedRoute),
}

/// Routes by id, evicted oldest first by age, count and pass budget.
#[derive(Debug)]
pub(crate) struct RouteCache {
    limits: RouteCacheLimits,
    routes: HashMap<String, CachedRoute>,
    /// Route ids in insertion (= time) order; may name routes already removed.
    order: VecDeque<String>,
    /// Passes held by undecided routes.
    pass_count: usize,
}

impl RouteCache {
    pub(crate) fn new(limits: RouteCacheLimits) -> Self {
        RouteCache {
            limits,
            routes: HashMap::new(),
            order: VecDeque::new(),
            pass_count: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.routes.len()
    }

    pub(crate) fn insert(&mut self, route_id: String, route: CachedRoute) {
        self.expire(route.created);
        self.pass_count += route.passes.len();
        self.order.push_back(route_id.clone());
        self.routes.insert(route_id, route);
        while self.routes.len() > self.limits.max_routes || self.pass_count > self.limits.max_passes
        {
            if !self.pop_oldest() {
                break;
            }
        }
    }

    pub(crate) fn lookup(&mut self, route_id: &str, now: Instant) -> Lookup<'_> {
        self.expire(now);
        match self.routes.get_mut(route_id) {
            Some(route) => Lookup::Found(route),
            None => Lookup::Missing,
        }
    }

    /// Drops a decided route's passes (its outcome is learned and logged).
    pub(crate) fn release_passes(&mut self, route_id: &str) {
        if let Some(route) = self.routes.get_mut(route_id) {
            self.pass_count -= route.passes.len();
            route.passes = Vec::new();
        }
    }

    fn expire(&mut self, now: Instant) {
        while let Some(oldest) = self.order.front() {
            let expired = match self.routes.get(oldest) {
                Some(route) => now.saturating_duration_since(route.created) > self.limits.ttl,
                None => true,
            };
            if !expired {
                break;
            }
            self.pop_oldest();
        }
    }

    fn pop_oldest(&mut self) -> bool {
        let Some(oldest) = self.order.pop_front() else {
            return false;
        };
        if let Some(route) = self.routes.remove(&oldest) {
            self.pass_count -= route.passes.len();
        }
        true
    }
}
