//! `ClientAgent::stage`: a batch built one call at a time on the server, committed or dropped
//! by a later call, as `Agent::stage` and `Agent::commit_staged` do in one process.

use crate::common;

use cheesedb::{Error, Id, Leg};
use common::server_process::ServerProcess;

#[test]
fn staged_writes_commit_together_or_not_at_all() {
    let folder = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(folder.path(), &[]);
    let client = server.client();
    let alice = client.open_agent(&client.create_agent("alice").unwrap()).unwrap();

    let lot = alice.stage(|batch| batch.add_lot("note", b"staged")).unwrap();
    let memory = alice.stage(|batch| batch.remember(b"from the staged lot", &[Leg::from([lot])])).unwrap();
    assert_eq!((lot, memory), (Id::from(1), Id::from(2)));
    // Nothing is written before the commit, and the session writes only through the batch.
    assert_eq!(alice.get(lot), Err(Error::UnknownId { id: lot }));
    assert!(matches!(alice.add_lot("note", b"outside"), Err(Error::MalformedMessage { .. })));
    alice.commit_staged().unwrap();
    assert_eq!(alice.get(memory).unwrap().content(), Some(&b"from the staged lot"[..]));

    let dropped = alice.stage(|batch| batch.add_lot("note", b"dropped")).unwrap();
    alice.drop_staged().unwrap();
    assert_eq!(alice.get(dropped), Err(Error::UnknownId { id: dropped }));
    assert_eq!(alice.add_lot("note", b"after the drop").unwrap(), dropped);
    // Committing or dropping with no batch open does nothing.
    alice.commit_staged().unwrap();
    alice.drop_staged().unwrap();
    server.stop();
}
