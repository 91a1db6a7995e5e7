//! SQLite under test, with the same data model and the same durability as cheesedb.
//!
//! Tables: `nodes` (lots and memories, with an alive flag), `legs` (each belongs to one memory)
//! and `parents` (the nodes each leg needs), indexed both ways: a leg's parents by the primary
//! key, a node's children through `children_of_parent`. WAL with synchronous=FULL: a commit is
//! on disk before it returns, and every write is its own transaction unless it is a batch.
//! A write checks that every parent exists and is alive, as cheesedb refuses a memory built on
//! a recalled parent.
//!
//! Erase nulls the content with `secure_delete` on (SQLite then zeroes the freed bytes of each
//! page) and truncates the WAL after the commit, which still holds the old page images
//! otherwise: only then is the text gone from every file, as cheesedb's Erase promises.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cheesedb::{Mode, Removal};
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};

use crate::engine::{ConcurrentWriter, Engine, OpenFigures};
use crate::failure::Failure;
use crate::folder::files_size_bytes;
use crate::workload::PlannedNode;

const DATABASE_FILE: &str = "bench.sqlite";

/// Memory for SQLite's page cache: in the range of what cheesedb's graph takes at a million
/// memories, so SQLite is not starved of the RAM cheesedb uses.
const CACHE_SIZE_KIBIBYTES: i64 = 256 * 1024;

/// A writer waits this long for another connection's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

const SCHEMA: &str = "
    CREATE TABLE nodes (
        id INTEGER PRIMARY KEY,
        kind INTEGER NOT NULL,            -- 0: lot, 1: memory
        label TEXT,                       -- lots only
        content BLOB,                     -- NULL once erased
        alive INTEGER NOT NULL DEFAULT 1
    );
    CREATE TABLE legs (
        id INTEGER PRIMARY KEY,
        memory INTEGER NOT NULL
    );
    CREATE INDEX legs_of_memory ON legs (memory);
    CREATE TABLE parents (
        leg INTEGER NOT NULL,
        parent INTEGER NOT NULL,
        PRIMARY KEY (leg, parent)
    ) WITHOUT ROWID;
    CREATE INDEX children_of_parent ON parents (parent, leg);
";

/// Work tables of a recall, private to the connection.
const RECALL_TABLES: &str = "
    CREATE TEMP TABLE IF NOT EXISTS recall_frontier (id INTEGER PRIMARY KEY);
    CREATE TEMP TABLE IF NOT EXISTS recall_next (id INTEGER PRIMARY KEY);
    CREATE TEMP TABLE IF NOT EXISTS recall_removed (id INTEGER PRIMARY KEY);
";

/// Fair, one round: the alive children of the frontier none of whose legs still holds. A leg
/// holds while none of its parents is dead. A memory whose last leg breaks because of a death
/// in this same round is a child of that death and is found in the next round.
///
/// CROSS JOIN fixes the join order: the planner knows nothing of the temporary frontier's size
/// and would otherwise scan the whole children index once per round.
const FAIR_ROUND: &str = "
    INSERT INTO recall_next (id)
    SELECT DISTINCT legs.memory
    FROM recall_frontier
    CROSS JOIN parents ON parents.parent = recall_frontier.id
    CROSS JOIN legs ON legs.id = parents.leg
    CROSS JOIN nodes ON nodes.id = legs.memory
    WHERE nodes.alive = 1
      AND NOT EXISTS (
        SELECT 1 FROM legs AS holding
        WHERE holding.memory = legs.memory
          AND NOT EXISTS (
            SELECT 1 FROM parents AS needed
            JOIN nodes AS parent_node ON parent_node.id = needed.parent
            WHERE needed.leg = holding.id AND parent_node.alive = 0
          )
      )
";

/// Strict: every alive node with the recalled one anywhere in its history, through dead nodes
/// too. UNION (not UNION ALL) visits each node once however many paths lead to it.
const STRICT_DESCENDANTS: &str = "
    WITH RECURSIVE descendants (id) AS (
        SELECT ?1
        UNION
        SELECT legs.memory
        FROM descendants
        JOIN parents ON parents.parent = descendants.id
        JOIN legs ON legs.id = parents.leg
    )
    INSERT INTO recall_removed (id)
    SELECT descendants.id FROM descendants JOIN nodes ON nodes.id = descendants.id
    WHERE nodes.alive = 1 AND descendants.id <> ?1
";

impl From<rusqlite::Error> for Failure {
    fn from(error: rusqlite::Error) -> Failure {
        Failure::new(format!("SQLite: {error}"))
    }
}

/// The SQLite side of the benchmark.
pub struct SqliteSide {
    folder: PathBuf,
    connection: Option<Connection>,
}

/// The version of the bundled SQLite, for the report.
pub fn version() -> &'static str {
    rusqlite::version()
}

/// Opens the database file in `folder` with the benchmark's settings.
fn connect(folder: &Path) -> Result<Connection, Failure> {
    let connection = open_with_settings(&folder.join(DATABASE_FILE))?;
    connection.execute_batch(RECALL_TABLES)?;
    Ok(connection)
}

/// Opens the database file `path` with the settings both SQLite sides of the benchmark use:
/// WAL, synchronous=FULL (durable commits), the page cache, temporary tables in memory.
pub fn open_with_settings(path: &Path) -> Result<Connection, Failure> {
    let connection = Connection::open(path)?;
    let journal_mode: String = connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !journal_mode.eq_ignore_ascii_case("wal") {
        return Err(Failure::new(format!("SQLite refused WAL mode (it kept {journal_mode})")));
    }
    connection.pragma_update(None, "synchronous", "FULL")?;
    connection.pragma_update(None, "cache_size", -CACHE_SIZE_KIBIBYTES)?;
    connection.pragma_update(None, "temp_store", "MEMORY")?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    Ok(connection)
}

impl SqliteSide {
    /// Creates the database in `folder`, which must be empty.
    pub fn create(folder: &Path) -> Result<SqliteSide, Failure> {
        let connection = connect(folder)?;
        connection.execute_batch(SCHEMA)?;
        Ok(SqliteSide { folder: folder.to_path_buf(), connection: Some(connection) })
    }

    fn connection(&mut self) -> Result<&mut Connection, Failure> {
        self.connection.as_mut().ok_or_else(|| Failure::new("the benchmark's SQLite database is not open"))
    }

    /// Kills `id` and what `mode` says depended on it, inside `transaction`; returns the
    /// memories removed, ascending.
    fn recall_in(transaction: &Transaction<'_>, id: u64, mode: Mode) -> Result<Vec<u64>, Failure> {
        let alive: Option<i64> =
            transaction.query_row("SELECT alive FROM nodes WHERE id = ?1", [id as i64], |row| row.get(0)).optional()?;
        match alive {
            None => return Err(Failure::new(format!("no lot or memory {id}"))),
            Some(0) => return Err(Failure::new(format!("{id} was already recalled"))),
            Some(_) => {}
        }
        transaction.execute("DELETE FROM recall_removed", [])?;
        transaction.execute("UPDATE nodes SET alive = 0 WHERE id = ?1", [id as i64])?;
        match mode {
            Mode::Fair => {
                transaction.execute("DELETE FROM recall_frontier", [])?;
                transaction.execute("INSERT INTO recall_frontier (id) VALUES (?1)", [id as i64])?;
                loop {
                    transaction.execute("DELETE FROM recall_next", [])?;
                    if transaction.execute(FAIR_ROUND, [])? == 0 {
                        break;
                    }
                    transaction.execute("UPDATE nodes SET alive = 0 WHERE id IN (SELECT id FROM recall_next)", [])?;
                    transaction.execute("INSERT INTO recall_removed (id) SELECT id FROM recall_next", [])?;
                    transaction.execute("DELETE FROM recall_frontier", [])?;
                    transaction.execute("INSERT INTO recall_frontier (id) SELECT id FROM recall_next", [])?;
                }
            }
            Mode::Strict => {
                transaction.execute(STRICT_DESCENDANTS, [id as i64])?;
                transaction.execute("UPDATE nodes SET alive = 0 WHERE id IN (SELECT id FROM recall_removed)", [])?;
            }
        }
        let mut removed = transaction.prepare("SELECT id FROM recall_removed ORDER BY id")?;
        let removed = removed.query_map([], |row| row.get::<_, i64>(0))?.collect::<Result<Vec<i64>, _>>()?;
        Ok(removed.into_iter().map(|id| id as u64).collect())
    }
}

/// Writes `node` inside `transaction`; returns its id.
fn insert_node(transaction: &Transaction<'_>, node: &PlannedNode) -> Result<u64, Failure> {
    match node {
        PlannedNode::Lot { label, content } => {
            let mut insert =
                transaction.prepare_cached("INSERT INTO nodes (kind, label, content) VALUES (0, ?1, ?2)")?;
            insert.execute(params![label, content])?;
        }
        PlannedNode::Memory { content, legs } => {
            let mut alive = transaction.prepare_cached("SELECT alive FROM nodes WHERE id = ?1")?;
            for parent in legs.iter().flatten() {
                match alive.query_row([*parent as i64], |row| row.get::<_, i64>(0)).optional()? {
                    Some(1) => {}
                    Some(_) => return Err(Failure::new(format!("parent {parent} was recalled"))),
                    None => return Err(Failure::new(format!("no lot or memory {parent}"))),
                }
            }
            let mut insert_memory = transaction.prepare_cached("INSERT INTO nodes (kind, content) VALUES (1, ?1)")?;
            insert_memory.execute([content])?;
            let memory = transaction.last_insert_rowid();
            let mut insert_leg = transaction.prepare_cached("INSERT INTO legs (memory) VALUES (?1)")?;
            let mut insert_parent = transaction.prepare_cached("INSERT INTO parents (leg, parent) VALUES (?1, ?2)")?;
            for leg in legs {
                insert_leg.execute([memory])?;
                let leg_id = transaction.last_insert_rowid();
                for parent in leg {
                    insert_parent.execute([leg_id, *parent as i64])?;
                }
            }
            return Ok(memory as u64);
        }
    }
    Ok(transaction.last_insert_rowid() as u64)
}

/// Writes `nodes` in one transaction, committed durably; returns their ids.
fn write_committed(connection: &mut Connection, nodes: &[PlannedNode]) -> Result<Vec<u64>, Failure> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut ids = Vec::with_capacity(nodes.len());
    for node in nodes {
        ids.push(insert_node(&transaction, node)?);
    }
    transaction.commit()?;
    Ok(ids)
}

impl Engine for SqliteSide {
    fn name(&self) -> &'static str {
        "SQLite"
    }

    fn write_batch(&mut self, nodes: &[PlannedNode]) -> Result<Vec<u64>, Failure> {
        write_committed(self.connection()?, nodes)
    }

    fn write_one(&mut self, node: &PlannedNode) -> Result<u64, Failure> {
        let ids = write_committed(self.connection()?, std::slice::from_ref(node))?;
        ids.first().copied().ok_or_else(|| Failure::new("SQLite wrote nothing"))
    }

    fn concurrent_writers(&mut self, count: usize) -> Result<Vec<Box<dyn ConcurrentWriter>>, Failure> {
        // One connection behind a lock. A connection per thread is worse: a writer that finds
        // the database locked sleeps in SQLite's busy handler (1 ms, then longer, up to 100 ms)
        // instead of waking when the lock is free.
        let shared = Arc::new(Mutex::new(connect(&self.folder)?));
        Ok((0..count)
            .map(|_| Box::new(SharedConnectionWriter { connection: shared.clone() }) as Box<dyn ConcurrentWriter>)
            .collect())
    }

    fn recall(&mut self, id: u64, mode: Mode, removal: Removal) -> Result<Vec<u64>, Failure> {
        let connection = self.connection()?;
        if removal == Removal::Erase {
            connection.pragma_update(None, "secure_delete", "ON")?;
        }
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let removed = SqliteSide::recall_in(&transaction, id, mode)?;
        if removal == Removal::Erase {
            transaction.execute(
                "UPDATE nodes SET content = NULL WHERE id = ?1 OR id IN (SELECT id FROM recall_removed)",
                [id as i64],
            )?;
        }
        transaction.commit()?;
        if removal == Removal::Erase {
            // Old page images stay in the WAL until it is checkpointed and truncated.
            connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            connection.pragma_update(None, "secure_delete", "OFF")?;
        }
        Ok(removed)
    }

    fn preview_recall(&mut self, id: u64, mode: Mode) -> Result<Vec<u64>, Failure> {
        let transaction = self.connection()?.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let removed = SqliteSide::recall_in(&transaction, id, mode)?;
        transaction.rollback()?;
        Ok(removed)
    }

    fn alive_memories(&mut self) -> Result<Vec<u64>, Failure> {
        let connection = self.connection()?;
        let mut alive = connection.prepare("SELECT id FROM nodes WHERE kind = 1 AND alive = 1 ORDER BY id")?;
        let ids = alive.query_map([], |row| row.get::<_, i64>(0))?.collect::<Result<Vec<i64>, _>>()?;
        Ok(ids.into_iter().map(|id| id as u64).collect())
    }

    fn reopen(&mut self) -> Result<OpenFigures, Failure> {
        if let Some(connection) = self.connection.take() {
            connection.close().map_err(|(_, error)| Failure::from(error))?;
        }
        let started = Instant::now();
        let connection = connect(&self.folder)?;
        let connected = Instant::now();
        // The first statement reads the schema: only then can the database serve anything.
        let _newest: Option<i64> = connection.query_row("SELECT max(id) FROM nodes", [], |row| row.get(0))?;
        let ready = Instant::now();
        self.connection = Some(connection);
        Ok(OpenFigures { store_open: connected - started, agent_open: ready - connected, ..OpenFigures::default() })
    }

    fn verify(&mut self) -> Result<u64, Failure> {
        let connection = self.connection()?;
        let verdict: String = connection.query_row("PRAGMA integrity_check", [], |row| row.get(0))?;
        if verdict != "ok" {
            return Err(Failure::new(format!("SQLite's integrity check failed: {verdict}")));
        }
        let database = self.folder.join(DATABASE_FILE);
        let size = std::fs::metadata(&database)
            .map_err(|error| Failure::new(format!("cannot read {}: {error}", database.display())))?
            .len();
        Ok(size)
    }

    fn compact(&mut self) -> Result<(), Failure> {
        self.connection()?.execute_batch("VACUUM")?;
        Ok(())
    }

    fn disk_bytes(&self) -> Result<u64, Failure> {
        files_size_bytes(&self.folder, |_| true)
    }
}

struct SharedConnectionWriter {
    connection: Arc<Mutex<Connection>>,
}

impl ConcurrentWriter for SharedConnectionWriter {
    fn write_one(&mut self, node: &PlannedNode) -> Result<(), Failure> {
        let mut connection = self.connection.lock().map_err(|_| Failure::new("another SQLite writer panicked"))?;
        write_committed(&mut connection, std::slice::from_ref(node)).map(|_| ())
    }
}
