//! [`EmbedderSource`]: where routing finds an embedder besides the built-in one — the seam that
//! keeps tests and the simulator off the network.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::embedder::Embedder;
use super::server_embedder::ServerEmbedder;
use crate::server::ServerReading;

/// Offers [`crate::routing::RoutingService`] an embedder for the managed server of a reading.
///
/// The service asks at start and, while it runs on the built-in embedder, at most every
/// [`crate::routing::EMBEDDER_RECHECK_INTERVAL`]; an `Err` (with a reason fit for the status
/// view) keeps it on the built-in [`crate::routing::HashedEmbedder`]. Production uses
/// [`ServerEmbedderSource`]; tests and `lull simulate` use [`BuiltInEmbedderOnly`], or their own
/// source, so that nothing they run reaches a real server.
pub trait EmbedderSource: Send + Sync {
    /// An embedder for the server `reading` describes, or why there is none.
    fn connect<'a>(
        &'a self,
        reading: &'a ServerReading,
    ) -> BoxFuture<'a, Result<Arc<dyn Embedder>, String>>;
}

/// The managed server's `/v1/embeddings` through a loaded model ([`ServerEmbedder::connect`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerEmbedderSource;

impl EmbedderSource for ServerEmbedderSource {
    fn connect<'a>(
        &'a self,
        reading: &'a ServerReading,
    ) -> BoxFuture<'a, Result<Arc<dyn Embedder>, String>> {
        Box::pin(async move {
            let embedder = ServerEmbedder::connect(reading).await?;
            Ok(Arc::new(embedder) as Arc<dyn Embedder>)
        })
    }
}

/// No embedder but the built-in one, and no request to anything.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltInEmbedderOnly;

/// The fallback reason [`BuiltInEmbedderOnly`] gives.
pub const BUILT_IN_ONLY_REASON: &str =
    "this engine is set up to use the built-in embedder only (no server embeddings are asked for)";

impl EmbedderSource for BuiltInEmbedderOnly {
    fn connect<'a>(
        &'a self,
        _reading: &'a ServerReading,
    ) -> BoxFuture<'a, Result<Arc<dyn Embedder>, String>> {
        Box::pin(std::future::ready(Err(BUILT_IN_ONLY_REASON.to_owned())))
    }
}
