//! This daemon as a node of a cluster (`cluster.node`): nodes that share
//! one PostgreSQL store, each owning the games it started or took over.
//! The store does the work that must be exact (the incarnation, the lease
//! judged by the database's clock, fenced writes, claims: see
//! `store::postgres::nodes` and `keeper`); this shell starts the keeper and
//! carries out what it reports: games taken over go to the lobby, which
//! starts them as at a restart (their players take their seats back within
//! `grace_secs`), tournaments taken over go on here, and a node declared
//! dead stops.

use std::sync::Mutex;
use std::time::Duration;

use actix::Addr;
use tokio::sync::oneshot;

use crate::bus::{Body, Bus};
use crate::config::{ClusterConfig, StoreConfig};
use crate::lobby::Lobby;
use crate::messages::{AdoptTourneys, Reannounce, Recover};
use crate::store::Store;
use crate::store::postgres::keeper::{Keeper, News};
use crate::store::postgres::{Joined, Joining};

/// The node to join as, if the configuration names one.
pub fn joining(config: &ClusterConfig) -> Option<Joining> {
    (!config.node.is_empty()).then(|| Joining {
        node: config.node.clone(),
        lease: Duration::from_secs(config.lease_secs),
    })
}

/// Starts keeping the lease of the node that `joined`; games it takes over
/// go to `lobby`, and once started there, the other nodes hear of them
/// (`bus`: their watchers and players elsewhere follow them here; nodes
/// declared dead are forgotten on every node); `lost` is told if the node
/// is declared dead.
pub fn keep(
    store_config: StoreConfig,
    joined: Joined,
    store: Store,
    (lobby, bus): (Addr<Lobby>, Option<Bus>),
    lost: oneshot::Sender<()>,
) -> std::io::Result<Keeper> {
    let lost = Mutex::new(Some(lost));
    // A node started again is a new incarnation: what connections of its
    // last one held on other nodes goes.
    if let Some(bus) = &bus {
        bus.broadcast(Body::Gone {
            nodes: vec![bus.node().to_string()],
        });
    }
    let news = move |news: News| match news {
        News::Claimed(games) => {
            let ids: Vec<u64> = games.iter().map(|g| g.id).collect();
            let (lobby, bus) = (lobby.clone(), bus.clone());
            // On the keeper's runtime: the lobby's answer is awaited there.
            tokio::spawn(async move {
                let _ = lobby.send(Recover(games)).await;
                if let Some(bus) = bus {
                    bus.broadcast(Body::Owns { games: ids });
                }
            });
        }
        // Run here from their facts; their games in play, wherever they
        // are, are followed to their ends.
        News::Tourneys(tourneys) => lobby.do_send(AdoptTourneys(tourneys)),
        // What connections of theirs held on this node's games goes (their
        // seats kept for the grace period), here and on every node.
        News::Declared(nodes) => {
            if let Some(bus) = &bus {
                bus.broadcast(Body::Gone { nodes });
            }
        }
        // A new leader pairs from an empty pool: it hears every seek again.
        News::Leader => lobby.do_send(Reannounce),
        News::Lost => {
            let told = lost.lock().ok().and_then(|mut lost| lost.take());
            if let Some(told) = told {
                let _ = told.send(());
            }
        }
    };
    Keeper::start(
        store_config,
        joined.member,
        joined.lease,
        joined.taken,
        store,
        Box::new(news),
    )
}
