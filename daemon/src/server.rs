//! Starting and stopping the daemon: the store (opened, checked and recovered
//! before anything listens), the actors, the worker threads, the engine and
//! password pools, the graceful shutdown, and (for `flipd`) the reload on
//! SIGHUP.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use actix::{Actor, Addr, Arbiter, ArbiterHandle, SyncArbiter, System};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::accounts::Accounts;
use crate::admission::Admission;
use crate::config::{Config, DescriptorTables};
use crate::engine_pool::EngineWorker;
use crate::hash_pool::HashPool;
use crate::listener::{Listener, StopAccepting};
use crate::lobby::Lobby;
use crate::messages::{BroadcastShutdown, Recover, RecoverTourneys};
use crate::metrics;
use crate::player_tls::PlayerTls;
use crate::reload::live::Live;
use crate::reload::{Hangups, Reload, reload_on_hangup};
use crate::rules::numbers::Numbers;
use crate::session::{LobbyPort, Shared};
use crate::stall_watch::{SlowMoves, report_slow_moves, watch_thread};
use crate::store::Store;

/// Where a daemon that has started listens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listening {
    /// The line protocol: the plain port, or the TLS port when there is no
    /// plain one.
    pub addr: SocketAddr,
    /// The TLS port, if there is one.
    pub tls: Option<SocketAddr>,
    /// `/metrics` and `/healthz`, if `metrics.listen` asks for them.
    pub metrics: Option<SocketAddr>,
}

/// A daemon that is running.
struct Running {
    addr: SocketAddr,
    tls: Option<SocketAddr>,
    /// The TLS port's certificate, read again on SIGHUP.
    player_tls: Option<Arc<PlayerTls>>,
    metrics: Option<SocketAddr>,
    /// Told to the health check once the daemon begins to stop.
    stopping: Arc<AtomicBool>,
    listeners: Vec<Addr<Listener>>,
    lobby: Addr<Lobby>,
    admission: Arc<Admission>,
    drain: Duration,
    live: Arc<Live>,
}

/// Runs the daemon until `stop` resolves, then shuts it down gracefully. `ready`
/// is told the address once the daemon listens. Blocks the calling thread.
///
/// The store is opened first: a file that is not flipline's store, or one in
/// use by another daemon, is an error naming the file before anything listens.
/// Last, once every actor has stopped, the store commits what is queued.
pub fn serve<S, F>(config: Config, stop: S, ready: impl FnOnce(Listening)) -> std::io::Result<()>
where
    S: FnOnce() -> F,
    F: Future<Output = ()>,
{
    run(config, stop, ready, None)
}

/// As [`serve`], and on every SIGHUP the configuration is read again with
/// `reload` and what a running daemon can change is applied (see
/// `reload`). SIGHUP is caught from before the store opens, so that
/// it never stops the daemon.
pub fn serve_reloading<S, F>(
    config: Config,
    stop: S,
    ready: impl FnOnce(Listening),
    reload: Reload,
) -> std::io::Result<()>
where
    S: FnOnce() -> F,
    F: Future<Output = ()>,
{
    run(config, stop, ready, Some(reload))
}

fn run<S, F>(
    config: Config,
    stop: S,
    ready: impl FnOnce(Listening),
    reload: Option<Reload>,
) -> std::io::Result<()>
where
    S: FnOnce() -> F,
    F: Future<Output = ()>,
{
    // Its thread joins the shared descriptor table, before any copy of it.
    crate::service_time::start();
    let system = System::new();
    // Arbiters belong to a System: create them after it.
    let workers = start_workers(config.worker_count())?;
    // Before the workers' tables, as theirs (`start_workers`).
    let lobby_home = home()?;
    let result = system.block_on(async {
        // The System's runtime exists, and with it tokio's signal pipe
        // (descriptor_tables.rs, rule 1); catching one more signal opens no
        // descriptor.
        let hangups = match reload {
            Some(reload) => Some((Hangups::catch()?, reload, config.clone())),
            None => None,
        };
        // Before the store: a certificate that cannot be used stops the
        // start at once, naming the file.
        let player_tls = load_player_tls(&config)?;
        // Before the workers' tables: see `Bus::start`.
        let bus = start_bus(&config)?;
        if config.descriptor_tables == DescriptorTables::PerWorker {
            // Before the store opens: see descriptor_tables.rs, rule 3.
            give_workers_own_tables(&workers).await?;
        }
        let joining = crate::cluster::joining(&config.cluster);
        let opened = Store::open_as(&config.store, joining).map_err(std::io::Error::other)?;
        let threads = opened.threads;
        let numbers = match opened.game_block {
            Some(block) => Numbers::in_blocks(block),
            None => Numbers::from(opened.next_game),
        };
        let joined = opened.joined;
        let recovery = Recovery {
            store: opened.store,
            playing: opened.playing,
            numbers,
            tourneys: opened.tourneys,
            next_tourney: opened.next_tourney,
            registered: opened.registered,
            node: joined.as_ref().map(|j| Arc::clone(&j.member.state)),
            bus: match (bus, &joined) {
                (Some(bus), Some(joined)) => Some(
                    bus.join(
                        &joined.cluster,
                        &config.cluster.node,
                        Arc::clone(&joined.member.state),
                    )
                    .map_err(std::io::Error::other)?,
                ),
                _ => None,
            },
        };
        actix::spawn(watch_thread("lobby".to_string()));
        actix::spawn(crate::homed::serve_here(lobby_home));
        let store_config = config.store.clone();
        let served = async {
            let store = recovery.store.clone();
            let bus = recovery.bus.as_ref().map(|(bus, _)| bus.clone());
            let running = start(config, &workers, recovery, player_tls).await?;
            let (lost_tx, lost) = oneshot::channel();
            let keeper = match joined {
                Some(joined) => {
                    let to = (running.lobby.clone(), bus);
                    Some(crate::cluster::keep(
                        store_config,
                        joined,
                        store,
                        to,
                        lost_tx,
                    )?)
                }
                None => None,
            };
            if let Some((hangups, reload, started_with)) = hangups {
                let live = Arc::clone(&running.live);
                let reloaded = (live, running.player_tls.clone());
                actix::spawn(reload_on_hangup(hangups, reload, started_with, reloaded));
            }
            ready(Listening {
                addr: running.addr,
                tls: running.tls,
                metrics: running.metrics,
            });
            let declared_dead = until_stopped(stop(), lost).await;
            shutdown(running).await;
            Ok::<_, std::io::Error>((keeper, declared_dead))
        }
        .await;
        Ok::<_, std::io::Error>((served, threads))
    });
    for worker in &workers {
        worker.stop();
    }
    for worker in workers {
        let _ = worker.join();
    }
    let (served, threads) = result?;
    threads.close();
    let (keeper, declared_dead) = served?;
    // After the store's last commits: the other nodes take the games once
    // this node has left.
    if let Some(keeper) = keeper {
        keeper.leave();
    }
    match declared_dead {
        false => Ok(()),
        true => Err(std::io::Error::other(
            "this node was declared dead by the cluster (it could not renew its lease in \
             time) and its games were taken over by other nodes: it stopped; start it again \
             to rejoin",
        )),
    }
}

/// Waits for `stop`, or for the node to be declared dead (`lost`, told only
/// to a cluster node): whether it was.
async fn until_stopped(stop: impl Future<Output = ()>, lost: oneshot::Receiver<()>) -> bool {
    let lost = async {
        match lost.await {
            Ok(()) => (),
            // Not a node, or its keeper is gone: only `stop` counts.
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        () = stop => false,
        () = lost => true,
    }
}

/// Starts the worker threads, each with a watch on its wake-ups and served
/// as a home (`homed.rs`).
fn start_workers(count: usize) -> std::io::Result<Vec<Arbiter>> {
    let workers: Vec<Arbiter> = (0..count)
        .map(|_| Arbiter::try_new())
        .collect::<std::io::Result<_>>()
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot start a worker thread: {e}")))?;
    for (index, worker) in workers.iter().enumerate() {
        worker.spawn(watch_thread(format!("worker {index}")));
        worker.spawn(crate::homed::serve_here(home()?));
    }
    Ok(workers)
}

/// A home for one actor thread; its bell is a wake-up descriptor, so it is
/// made before any thread's table is its own (descriptor_tables.rs, rule 1).
fn home() -> std::io::Result<crate::homed::Home> {
    crate::homed::Home::new().map_err(|e| {
        std::io::Error::new(e.kind(), format!("cannot make an actor thread's home: {e}"))
    })
}

/// Gives every worker thread a descriptor table of its own. All of their
/// runtimes exist by now, so every table holds every wake-up descriptor
/// (descriptor_tables.rs, rule 1).
async fn give_workers_own_tables(workers: &[Arbiter]) -> std::io::Result<()> {
    for (index, worker) in workers.iter().enumerate() {
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        worker.spawn(async move {
            let _ = done_tx.send(crate::descriptor_tables::unshare());
        });
        let failed = |e: std::io::Error| {
            std::io::Error::new(
                e.kind(),
                format!("cannot give worker {index} a descriptor table of its own: {e}"),
            )
        };
        done_rx
            .await
            .map_err(|_| failed(std::io::Error::other("the thread stopped")))?
            .map_err(failed)?;
    }
    Ok(())
}

/// The TLS port's certificate, if there is a TLS port.
fn load_player_tls(config: &Config) -> std::io::Result<Option<Arc<PlayerTls>>> {
    let tls = &config.tls;
    if tls.listen.is_empty() {
        return Ok(None);
    }
    let loaded = PlayerTls::load(&tls.certificate, &tls.key).map_err(std::io::Error::other)?;
    Ok(Some(Arc::new(loaded)))
}

/// What the store gave at start.
struct Recovery {
    store: Store,
    playing: Vec<crate::store::GameRecord>,
    numbers: Numbers,
    /// A cluster node's lease and counts, for the health check.
    node: Option<Arc<crate::node_state::NodeState>>,
    /// A cluster node's bus to the others, if it has one.
    bus: Option<(crate::bus::Bus, crate::bus::InboundSlot)>,
    tourneys: Vec<crate::store::StoredTourney>,
    next_tourney: flipline::protocol::TourneyId,
    registered: crate::rules::registered::RegisteredNames,
}

async fn start(
    config: Config,
    workers: &[Arbiter],
    recovery: Recovery,
    player_tls: Option<Arc<PlayerTls>>,
) -> std::io::Result<Running> {
    let config = Arc::new(config);
    let per_worker = config.descriptor_tables == DescriptorTables::PerWorker;
    // Bound before the games are recovered, so that a port in use stops the
    // start early; accepted from once the listeners start, last.
    let plain = Port::bind(&config.listen, None, per_worker).await?;
    let tls = match &player_tls {
        Some(player_tls) => {
            let certificate = Some(Arc::clone(player_tls));
            Port::bind(&config.tls.listen, certificate, per_worker).await?
        }
        None => None,
    };
    let handles: Vec<_> = workers.iter().map(Arbiter::handle).collect();
    let engine = SyncArbiter::start(config.engine_threads, || EngineWorker);
    let Recovery {
        store,
        playing,
        numbers,
        tourneys,
        next_tourney,
        registered,
        node,
        bus,
    } = recovery;
    let live = Arc::new(Live::new(&config));
    let lobby = Lobby::start(
        Arc::clone(&config),
        Arc::clone(&live),
        engine.clone(),
        handles.clone(),
        (store.clone(), node.clone()),
        numbers,
        next_tourney,
    );
    let recovered = lobby
        .send(Recover(playing))
        .await
        .map_err(|e| std::io::Error::other(format!("cannot recover games: {e}")))?;
    if recovered > 0 {
        tracing::info!(recovered, "recovered {recovered} games in play");
    }
    // After the games: a tournament's games in play have their actors.
    lobby
        .send(RecoverTourneys(tourneys))
        .await
        .map_err(|e| std::io::Error::other(format!("cannot recover tournaments: {e}")))?;
    let passwords = &config.passwords;
    let pool = HashPool::start(passwords.hash_threads, passwords.hash_queue).map_err(|e| {
        std::io::Error::new(e.kind(), format!("cannot start the password threads: {e}"))
    })?;
    let accounts = Accounts::new(store.clone(), registered, pool, config.guests, passwords);
    let accounts = match config.cluster.node.is_empty() {
        true => accounts,
        false => accounts.shared(),
    };
    let store_stats = store.live_stats();
    // A player's address keeps the places kept for players as long as a
    // seat is kept for a player who went.
    let reconnect_window = Duration::from_secs(config.grace_secs);
    let admission = Arc::new(Admission::new(reconnect_window));
    let slow_moves = Arc::new(SlowMoves::default());
    actix::spawn(report_slow_moves(Arc::clone(&slow_moves)));
    let elsewhere = match (bus, &node) {
        (Some(bus), Some(node)) => {
            // Games a player elsewhere starts here, and the routes of
            // players here to games elsewhere, run on a worker, not beside
            // the lobby.
            let worker = workers
                .first()
                .map_or_else(actix::Arbiter::current, Arbiter::handle);
            let to = (&lobby, worker);
            let lease = Duration::from_secs(config.cluster.lease_secs);
            Some(reach_other_nodes(
                bus,
                to,
                &store,
                (Arc::clone(node), lease),
            ))
        }
        _ => None,
    };
    let shared = Arc::new(Shared {
        live: Arc::clone(&live),
        lobby: lobby_port(&lobby),
        admission: Arc::clone(&admission),
        next_session: AtomicU64::new(1),
        table_capacity: table_capacity(),
        store,
        accounts: Arc::new(accounts),
        slow_moves,
        clustered: !config.cluster.node.is_empty(),
        elsewhere,
        plain_passwords: config.tls.plain_passwords,
        tls_port: std::sync::OnceLock::new(),
        doors: Arc::default(),
    });
    let mut listeners = Vec::new();
    let tls = match tls {
        Some(port) => Some(port.listen(&handles, &shared, &mut listeners).await?),
        None => None,
    };
    if let Some(tls) = tls {
        let _ = shared.tls_port.set(tls);
        tracing::info!(%tls, "the TLS port listens on {tls}");
    }
    let plain = match plain {
        Some(port) => Some(port.listen(&handles, &shared, &mut listeners).await?),
        None => None,
    };
    let Some(addr) = plain.or(tls) else {
        return Err(std::io::Error::other(
            "neither listen nor tls.listen names a port",
        ));
    };
    // Where the store is: the file, or the database without its password.
    let store_place = match config.store.url.is_empty() {
        true => config.store.path.display().to_string(),
        false => config.store.url.redacted(),
    };
    tracing::info!(
        %addr,
        workers = workers.len(),
        listening_sockets = listeners.len(),
        store = %store_place,
        "listening on {addr}, the store in {store_place}"
    );
    let stopping = Arc::new(AtomicBool::new(false));
    let sources = metrics::Sources {
        admission: Arc::clone(&admission),
        store: store_stats,
        stopping: Arc::clone(&stopping),
        node,
        doors: Arc::clone(&shared.doors),
    };
    let metrics = serve_metrics(&config.metrics.listen, sources).await?;
    let drain = Duration::from_millis(config.shutdown_drain_ms);
    Ok(Running {
        addr,
        tls,
        player_tls,
        metrics,
        stopping,
        listeners,
        lobby,
        admission,
        drain,
        live,
    })
}

/// On a cluster's node with a NATS server (`cluster.nats`), its bus.
fn start_bus(config: &Config) -> std::io::Result<Option<crate::bus::Starting>> {
    let cluster = &config.cluster;
    if cluster.nats.is_empty() {
        return Ok(None);
    }
    crate::bus::Bus::start(cluster)
        .map(Some)
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot start the cluster's bus: {e}")))
}

/// The directory of the other nodes' games, for `WATCH` and `JOIN`, over
/// `bus`.
fn reach_other_nodes(
    (bus, slot): (crate::bus::Bus, crate::bus::InboundSlot),
    (lobby, worker): (&Addr<Lobby>, ArbiterHandle),
    store: &Store,
    (counts, lease): (Arc<crate::node_state::NodeState>, Duration),
) -> crate::session::Elsewhere {
    let doors = crate::remote::LobbyDoors {
        connected: lobby.clone().recipient(),
        login: lobby.clone().recipient(),
        join: lobby.clone().recipient(),
        rematch: lobby.clone().recipient(),
        leave: lobby.clone().recipient(),
        gone: lobby.clone().recipient(),
        sit_away: lobby.clone().recipient(),
        back: lobby.clone().recipient(),
        over_there: lobby.clone().recipient(),
        list_games: lobby.clone().recipient(),
        list_players: lobby.clone().recipient(),
        reserve: lobby.clone().recipient(),
        release: lobby.clone().recipient(),
        pair: lobby.clone().recipient(),
        paired: lobby.clone().recipient(),
        challenged: lobby.clone().recipient(),
        challenge_word: lobby.clone().recipient(),
        reserve_challenger: lobby.clone().recipient(),
        release_challenger: lobby.clone().recipient(),
        nodes_gone: lobby.clone().recipient(),
        take_out: lobby.clone().recipient(),
        free_taken_out: lobby.clone().recipient(),
        tell_name: lobby.clone().recipient(),
        tourney: lobby.clone().recipient(),
        reannounce: lobby.clone().recipient(),
        worker,
    };
    let lookups = (lobby.clone().recipient(), doors, store.clone());
    let remote = crate::remote::Remote::attach(bus, &slot, lookups, (counts, lease));
    let teller = std::sync::Arc::clone(&remote);
    lobby.do_send(crate::messages::TellEnds(Box::new(move |game| {
        teller.tell_over(game);
    })));
    // The lobby's leader pairs the seeks of every node.
    let (pooler, pending) = (Arc::downgrade(&remote), Arc::downgrade(&remote));
    lobby.do_send(crate::messages::PoolSeeks {
        tell: Box::new(move |note| {
            if let Some(remote) = pooler.upgrade() {
                remote.pool_note(note);
            }
        }),
        pending: Box::new(move |name| pending.upgrade().is_some_and(|r| r.pairing_pending(name))),
    });
    let link = crate::remote::LobbyLink::new(&remote);
    lobby.do_send(crate::messages::ReachNodes(Arc::new(link)));
    let directory = crate::remote::Directory {
        remote,
        store: store.clone(),
    }
    .start();
    crate::session::Elsewhere {
        find: directory.clone().recipient(),
        sit: directory.clone().recipient(),
        rematch: directory.clone().recipient(),
        leave: directory.clone().recipient(),
        kept: directory.clone().recipient(),
        list_games: directory.clone().recipient(),
        list_players: directory.clone().recipient(),
        gone: directory.recipient(),
    }
}

/// Starts the metrics listener on `listen`, if it names an address.
async fn serve_metrics(
    listen: &str,
    sources: metrics::Sources,
) -> std::io::Result<Option<SocketAddr>> {
    if listen.is_empty() {
        return Ok(None);
    }
    let socket = TcpListener::bind(listen).await.map_err(|e| {
        std::io::Error::new(e.kind(), format!("cannot serve metrics on {listen}: {e}"))
    })?;
    let addr = socket.local_addr()?;
    actix::spawn(metrics::serve(socket, Arc::new(sources)));
    tracing::info!(%addr, "serving metrics on {addr} (/metrics, /healthz)");
    Ok(Some(addr))
}

/// A port for players, bound and not yet accepting: the plain one or
/// (with a certificate) the TLS one.
struct Port {
    /// As the settings name it.
    listen: String,
    /// The process's one socket; `None` with a descriptor table per worker,
    /// where each worker binds its own.
    socket: Option<TcpListener>,
    tls: Option<Arc<PlayerTls>>,
}

impl Port {
    /// The port `listen` names (none if it is empty), its socket bound
    /// unless each worker binds its own.
    async fn bind(
        listen: &str,
        tls: Option<Arc<PlayerTls>>,
        per_worker: bool,
    ) -> std::io::Result<Option<Port>> {
        if listen.is_empty() {
            return Ok(None);
        }
        let socket = match per_worker {
            true => None,
            false => Some(
                TcpListener::bind(listen)
                    .await
                    .map_err(cannot_listen(listen))?,
            ),
        };
        Ok(Some(Port {
            listen: listen.to_string(),
            socket,
            tls,
        }))
    }

    /// Starts its listeners (adding them to `listeners`); where it listens.
    async fn listen(
        self,
        workers: &[ArbiterHandle],
        shared: &Arc<Shared>,
        listeners: &mut Vec<Addr<Listener>>,
    ) -> std::io::Result<SocketAddr> {
        let Some(socket) = self.socket else {
            let (addr, started) = listen_on_each_worker(&self.listen, workers, shared, self.tls)
                .await
                .map_err(cannot_listen(&self.listen))?;
            listeners.extend(started);
            return Ok(addr);
        };
        let addr = socket.local_addr()?;
        let shared = Arc::clone(shared);
        listeners.push(Listener::new(socket, shared, self.tls, workers.to_vec()).start());
        Ok(addr)
    }
}

/// The error of a port that cannot be bound, naming it.
fn cannot_listen(listen: &str) -> impl Fn(std::io::Error) -> std::io::Error + '_ {
    move |e| std::io::Error::new(e.kind(), format!("cannot listen on {listen}: {e}"))
}

/// Binds a listening socket on every worker thread, in that thread's own
/// descriptor table, all on one port (`SO_REUSEPORT`, the system spreads new
/// connections over them), each with a listener actor that keeps the sessions
/// it accepts on its thread. The first asks for the port when `listen` leaves
/// it to the system; the others take the same.
async fn listen_on_each_worker(
    listen: &str,
    workers: &[ArbiterHandle],
    shared: &Arc<Shared>,
    tls: Option<Arc<PlayerTls>>,
) -> std::io::Result<(SocketAddr, Vec<Addr<Listener>>)> {
    let named = tokio::net::lookup_host(listen)
        .await?
        .next()
        .ok_or_else(|| std::io::Error::other("the address names no host"))?;
    let mut addr = free_address(named)?;
    let mut listeners = Vec::with_capacity(workers.len());
    for worker in workers {
        let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
        let shared = Arc::clone(shared);
        let tls = tls.clone();
        worker.spawn(async move {
            let bound = reuse_port_listener(addr).and_then(|socket| {
                let local = socket.local_addr()?;
                Ok((local, Listener::on_own_table(socket, shared, tls).start()))
            });
            let _ = bound_tx.send(bound);
        });
        let (local, listener) = bound_rx
            .await
            .map_err(|_| std::io::Error::other("a worker thread stopped"))??;
        addr = local;
        listeners.push(listener);
    }
    Ok((addr, listeners))
}

/// Connections a descriptor table holds: the open-file limit less what the
/// daemon keeps for other things.
fn table_capacity() -> usize {
    #[cfg(unix)]
    if let Ok((soft, _)) = rlimit::getrlimit(rlimit::Resource::NOFILE) {
        let capacity = crate::config::table_capacity(soft);
        return usize::try_from(capacity).unwrap_or(usize::MAX);
    }
    usize::MAX
}

/// `addr` with its port, if it is free: the sockets that share a port with
/// `SO_REUSEPORT` would also share it with another daemon of the same user
/// that does the same, each getting some of the connections, where one that
/// binds alone is told the port is in use. So a socket binds it alone first,
/// and is closed again. With port 0 it is the one that asks for the port.
fn free_address(addr: SocketAddr) -> std::io::Result<SocketAddr> {
    let probe = std::net::TcpListener::bind(addr)?;
    probe.local_addr()
}

/// A listening socket that shares its port with the daemon's others.
fn reuse_port_listener(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    #[cfg(unix)]
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Connections a listening socket queues before they are accepted (the system
/// caps it at `net.core.somaxconn`).
const LISTEN_BACKLOG: u32 = 4096;

/// Stops accepting, tells every connection, and waits (up to the drain time) for
/// the connections to finish what they were doing and close.
async fn shutdown(running: Running) {
    tracing::info!("shutting down");
    running.stopping.store(true, Ordering::Relaxed);
    for listener in &running.listeners {
        let _ = listener.send(StopAccepting).await;
    }
    let _ = running.lobby.send(BroadcastShutdown).await;
    let deadline = Instant::now() + running.drain;
    while running.admission.connections() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Writers get a moment to flush the last lines after their sessions stop.
    tokio::time::sleep(Duration::from_millis(50)).await;
    tracing::info!(left = running.admission.connections(), "stopped");
}

/// Resolves on SIGINT or SIGTERM.
pub async fn termination_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A daemon on a thread of its own, for tests and for the client's local mode.
/// Dropping the handle shuts it down.
pub struct DaemonThread {
    /// Where it listens: the plain port, or the TLS port when there is no
    /// plain one.
    pub addr: SocketAddr,
    /// The TLS port, if there is one.
    pub tls: Option<SocketAddr>,
    /// Where it serves metrics, if it does.
    pub metrics: Option<SocketAddr>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl DaemonThread {
    /// Starts a daemon with `config` and waits until it listens.
    pub fn start(config: Config) -> std::io::Result<DaemonThread> {
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("flipd".into())
            .spawn(move || {
                let ready_tx2 = ready_tx.clone();
                let result = serve(
                    config,
                    move || async {
                        let _ = stop_rx.await;
                    },
                    move |listening| {
                        let _ = ready_tx2.send(Ok(listening));
                    },
                );
                if let Err(e) = &result {
                    let _ = ready_tx.send(Err(std::io::Error::new(e.kind(), e.to_string())));
                }
                result
            })?;
        let listening: Listening = ready_rx
            .recv()
            .map_err(|_| std::io::Error::other("the daemon thread ended before listening"))??;
        Ok(DaemonThread {
            addr: listening.addr,
            tls: listening.tls,
            metrics: listening.metrics,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// Shuts the daemon down gracefully and waits for it.
    pub fn stop(mut self) -> std::io::Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(std::io::Error::other("the daemon thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for DaemonThread {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// The lobby's recipients for the sessions (which name no lobby type).
fn lobby_port(lobby: &Addr<Lobby>) -> LobbyPort {
    LobbyPort {
        connected: lobby.clone().recipient(),
        gone: lobby.clone().recipient(),
        login: lobby.clone().recipient(),
        create: lobby.clone().recipient(),
        seek: lobby.clone().recipient(),
        join: lobby.clone().recipient(),
        leave: lobby.clone().recipient(),
        rematch: lobby.clone().recipient(),
        find: lobby.clone().recipient(),
        list_games: lobby.clone().recipient(),
        list_players: lobby.clone().recipient(),
        challenge: lobby.clone().recipient(),
        marked_bot: lobby.clone().recipient(),
        tourney: lobby.clone().recipient(),
        taken_over: lobby.clone().recipient(),
    }
}
