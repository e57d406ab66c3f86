//! The scrape's text: the counters summed over threads and the gauges, in
//! Prometheus's text format (version 0.0.4), written by prometheus-client.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use flipline::protocol::ErrorCode;

use super::counters::{BUCKETS, Durations, Totals};

/// What is read rather than counted, at the scrape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Games in play.
    pub games_in_play: i64,
    /// Connections held.
    pub connections: i64,
    /// Writes waiting for the store's writer.
    pub store_queue: i64,
    /// Engine jobs waiting for an engine thread.
    pub engine_queue: i64,
    /// A cluster node's counts.
    pub node: Option<crate::node_state::NodeCounts>,
    /// The SQLite store's checkpoints: beside the writer, and inside its
    /// commits (zero on PostgreSQL). Counters, read at the scrape.
    pub checkpoints: (u64, u64),
    /// Connections admitted on the plain and the TLS port, TLS handshakes
    /// refused and late (`metrics::Door`'s order). Counters.
    pub doors: [u64; 4],
}

/// One scrape's values.
#[derive(Debug)]
struct Scrape {
    totals: Totals,
    /// The store's commit times (the store's own, not the threads').
    commits: Durations,
    gauges: Gauges,
}

fn gauge(encoder: &mut DescriptorEncoder, name: &str, help: &str, value: i64) -> std::fmt::Result {
    let gauge = ConstGauge::new(value);
    let metric = encoder.encode_descriptor(name, help, None, gauge.metric_type())?;
    gauge.encode(metric)
}

fn histogram(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    durations: &Durations,
) -> std::fmt::Result {
    let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Histogram)?;
    let buckets: Vec<(f64, u64)> = BUCKETS.iter().copied().zip(durations.buckets).collect();
    let sum = durations.sum_us as f64 / 1e6;
    metric.encode_histogram::<NoLabelSet>(sum, durations.count, &buckets, None)
}

fn counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: u64,
) -> std::fmt::Result {
    let counter = ConstCounter::new(value);
    let metric = encoder.encode_descriptor(name, help, None, counter.metric_type())?;
    counter.encode(metric)
}

/// A cluster node's own counters.
/// The store's checkpoints by where they ran: a commit that checkpoints
/// holds the moves of its batch, one beside the writer holds none.
fn checkpoints(
    encoder: &mut DescriptorEncoder,
    (beside, in_commit): (u64, u64),
) -> std::fmt::Result {
    let help = "The store's WAL checkpoints, beside the writer or inside a commit.";
    let mut family =
        encoder.encode_descriptor("flipline_checkpoints", help, None, MetricType::Counter)?;
    for (place, count) in [("beside", beside), ("commit", in_commit)] {
        let labels = [("where", place)];
        let metric = family.encode_family(&labels)?;
        ConstCounter::new(count).encode(metric)?;
    }
    Ok(())
}

/// Connections by the port they came in on, and the TLS handshakes that
/// failed by why.
fn doors(
    encoder: &mut DescriptorEncoder,
    [plain, tls, refused, late]: [u64; 4],
) -> std::fmt::Result {
    let help = "Connections admitted, by the port (listener) they came in on.";
    let mut family = encoder.encode_descriptor(
        "flipline_connections_accepted",
        help,
        None,
        MetricType::Counter,
    )?;
    for (listener, count) in [("plain", plain), ("tls", tls)] {
        let labels = [("listener", listener)];
        let metric = family.encode_family(&labels)?;
        ConstCounter::new(count).encode(metric)?;
    }
    let help = "TLS handshakes on the TLS port that failed: refused (broken off, not TLS, \
                the certificate refused) or late (past the login deadline).";
    let mut family = encoder.encode_descriptor(
        "flipline_tls_handshake_failures",
        help,
        None,
        MetricType::Counter,
    )?;
    for (why, count) in [("refused", refused), ("late", late)] {
        let labels = [("why", why)];
        let metric = family.encode_family(&labels)?;
        ConstCounter::new(count).encode(metric)?;
    }
    Ok(())
}

fn node_counters(
    encoder: &mut DescriptorEncoder,
    node: &crate::node_state::NodeCounts,
) -> std::fmt::Result {
    let help = "Renewals of this node's lease that succeeded.";
    counter(encoder, "flipline_lease_renewals", help, node.renewals)?;
    let help = "Renewals of this node's lease that failed (PostgreSQL unreachable or slow).";
    counter(
        encoder,
        "flipline_lease_renewal_failures",
        help,
        node.renewal_failures,
    )?;
    let help = "Games in play this node took over from dead nodes.";
    counter(
        encoder,
        "flipline_games_taken_over",
        help,
        node.games_claimed,
    )?;
    let help = "Tournaments this node took over from dead nodes.";
    counter(
        encoder,
        "flipline_tourneys_taken_over",
        help,
        node.tourneys_claimed,
    )?;
    let help = "Nodes this node declared dead (their lease passed).";
    counter(
        encoder,
        "flipline_nodes_declared_dead",
        help,
        node.nodes_declared_dead,
    )?;
    let help = "Requests this node sent to other nodes (WATCH of their games).";
    counter(
        encoder,
        "flipline_remote_requests_sent",
        help,
        node.remote_sent,
    )?;
    let help = "Requests of other nodes this node answered.";
    counter(
        encoder,
        "flipline_remote_requests_served",
        help,
        node.remote_served,
    )?;
    let help = "Players' commands a dead node left unanswered, sent again here.";
    counter(
        encoder,
        "flipline_remote_commands_resent",
        help,
        node.remote_resent,
    )?;
    let help = "Pairings of seeks this node made as the lobby's leader.";
    counter(encoder, "flipline_lobby_pairings", help, node.pairings)?;
    let help = "Seeks of every node waiting in this node's pool, while it leads the lobby.";
    let waiting = i64::try_from(node.seeks_pooled).unwrap_or(i64::MAX);
    gauge(encoder, "flipline_lobby_seeks_waiting", help, waiting)?;
    let Some(up) = node.bus_up else {
        return Ok(());
    };
    let help = "1 while this node's link to the cluster's NATS server is up, else 0.";
    gauge(encoder, "flipline_bus_up", help, i64::from(up))?;
    let help = "Messages to other nodes dropped because the bus's queue was full.";
    counter(
        encoder,
        "flipline_bus_messages_dropped",
        help,
        node.bus_dropped,
    )
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let g = &self.gauges;
        gauge(
            &mut encoder,
            "flipline_games_in_play",
            "Games being played.",
            g.games_in_play,
        )?;
        gauge(
            &mut encoder,
            "flipline_connections",
            "Connections held.",
            g.connections,
        )?;
        let help = "Writes waiting for the store's writer.";
        gauge(&mut encoder, "flipline_store_queue", help, g.store_queue)?;
        let help = "Engine jobs (bot moves, hints) waiting for an engine thread.";
        gauge(&mut encoder, "flipline_engine_queue", help, g.engine_queue)?;
        let moves = ConstCounter::new(self.totals.moves.count);
        let help = "Moves and passes answered.";
        let metric =
            encoder.encode_descriptor("flipline_moves", help, None, moves.metric_type())?;
        moves.encode(metric)?;
        let help = "Time from a move's line read to its reply, in seconds.";
        histogram(
            &mut encoder,
            "flipline_move_seconds",
            help,
            &self.totals.moves,
        )?;
        let help = "Time of the store's commits (one a batch of writes), in seconds.";
        histogram(&mut encoder, "flipline_commit_seconds", help, &self.commits)?;
        checkpoints(&mut encoder, g.checkpoints)?;
        doors(&mut encoder, g.doors)?;
        if let Some(node) = &g.node {
            node_counters(&mut encoder, node)?;
        }
        let help = "Commands answered ERR, by code.";
        let mut family =
            encoder.encode_descriptor("flipline_errors", help, None, MetricType::Counter)?;
        for (code, count) in ErrorCode::ALL.iter().zip(self.totals.errors) {
            let number = code.number().to_string();
            let labels = [("code", number.as_str())];
            let metric = family.encode_family(&labels)?;
            ConstCounter::new(count).encode(metric)?;
        }
        Ok(())
    }
}

/// The text of a scrape of `totals`, the store's `commits` and `gauges`.
pub fn text(totals: Totals, commits: Durations, gauges: Gauges) -> String {
    let mut registry = Registry::default();
    let scrape = Scrape {
        totals,
        commits,
        gauges,
    };
    registry.register_collector(Box::new(scrape));
    let mut text = String::new();
    match prometheus_client::encoding::prometheus_text::encode(&mut text, &registry) {
        Ok(()) => text,
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_is_there_in_the_text_format() {
        let mut totals = Totals::default();
        totals.moves.count = 7;
        totals.moves.buckets[2] = 5;
        totals.moves.sum_us = 3_500;
        totals.errors[6] = 2;
        let gauges = Gauges {
            games_in_play: 3,
            connections: 6,
            store_queue: 1,
            engine_queue: 0,
            node: Some(crate::node_state::NodeCounts {
                renewals: 9,
                renewal_failures: 1,
                games_claimed: 4,
                tourneys_claimed: 3,
                nodes_declared_dead: 2,
                remote_sent: 5,
                remote_served: 6,
                remote_resent: 1,
                pairings: 8,
                seeks_pooled: 2,
                bus_up: Some(false),
                bus_dropped: 7,
            }),
            checkpoints: (12, 3),
            doors: [5, 4, 2, 1],
        };
        let text = text(totals, Durations::default(), gauges);
        for line in [
            "# TYPE flipline_games_in_play gauge",
            "flipline_games_in_play 3",
            "flipline_connections 6",
            "flipline_store_queue 1",
            "flipline_engine_queue 0",
            "# TYPE flipline_moves_total counter",
            "flipline_moves_total 7",
            "# TYPE flipline_move_seconds histogram",
            "flipline_move_seconds_bucket{le=\"0.001\"} 5",
            "flipline_move_seconds_bucket{le=\"+Inf\"} 7",
            "flipline_move_seconds_count 7",
            "flipline_move_seconds_sum 0.0035",
            "flipline_commit_seconds_count 0",
            "# TYPE flipline_checkpoints_total counter",
            "flipline_checkpoints_total{where=\"beside\"} 12",
            "flipline_checkpoints_total{where=\"commit\"} 3",
            "flipline_errors_total{code=\"422\"} 2",
            "flipline_connections_accepted_total{listener=\"plain\"} 5",
            "flipline_connections_accepted_total{listener=\"tls\"} 4",
            "flipline_tls_handshake_failures_total{why=\"refused\"} 2",
            "flipline_tls_handshake_failures_total{why=\"late\"} 1",
            "flipline_errors_total{code=\"400\"} 0",
            "flipline_lease_renewals_total 9",
            "flipline_lease_renewal_failures_total 1",
            "flipline_games_taken_over_total 4",
            "flipline_tourneys_taken_over_total 3",
            "flipline_nodes_declared_dead_total 2",
            "flipline_remote_requests_sent_total 5",
            "flipline_remote_requests_served_total 6",
            "flipline_lobby_pairings_total 8",
            "flipline_lobby_seeks_waiting 2",
            "flipline_bus_up 0",
            "flipline_bus_messages_dropped_total 7",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
    }
}
