//! What a shared store that forgot, or holds a damaged epoch, leaves intact (DESIGN.md §14,
//! §19): a named client's token and caps, and a relay that heals itself without anyone
//! running a command against the store.

use crate::relay::{MODEL, messages_body};
use crate::support::redis::{RedisServer, Resp};
use crate::support::relay::{Answer, RelayProc};
use crate::support::{MockApi, Reply, Rule};
use crate::team_relay::{PREFIX, budget_status, post, replica};

fn post_as(relay: &RelayProc, token: &str) -> Answer {
    relay.post(
        "/anthropic/v1/messages",
        Some(token),
        &messages_body(MODEL),
        &[],
    )
}

fn error_type(answer: &Answer) -> String {
    answer.json()["error"]["type"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn a_named_clients_token_and_caps_survive_a_store_that_forgot() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let sb = replica(&api, &redis, "");
    let add = sb.run(&["--relay", "tokens", "add", "alice", "--daily-calls", "2"]);
    assert_eq!(add.code, Some(0), "{add:?}");
    let alice = add.stdout.trim().to_string();
    let relay = RelayProc::start(&sb, &[]);
    assert_eq!(post_as(&relay, &alice).status, 200);

    redis.flushall();
    let after = post_as(&relay, &alice);
    assert_eq!(after.status, 200, "{}\n{}", after.body, relay.stderr());
    // Her cap came back, and her count with it: this is her third call of the day.
    let third = post_as(&relay, &alice);
    assert_eq!(
        (third.status, error_type(&third)),
        (429, "budget_exhausted".to_string()),
        "{}",
        third.body
    );
    assert_eq!(api.posts(), 2);
    // What this machine keeps to put the clients back is their hashes, never a token.
    for (path, text) in sb.state_files() {
        assert!(!text.contains(&alice), "{} holds the token", path.display());
    }
}

#[test]
fn a_garbage_epoch_is_rewritten_by_the_relay_without_anyone_deleting_it() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let sb = replica(&api, &redis, "[budget]\ncalls = 3\ntokens = 0\n");
    let relay = RelayProc::start(&sb, &[]);
    assert_eq!(post(&relay).status, 200);
    let epoch = format!("{PREFIX}:epoch");

    // Not a number…
    assert_eq!(
        redis.command(&["SET", &epoch, "garbage"]),
        Resp::Simple("OK".into())
    );
    let answer = post(&relay);
    assert_eq!(answer.status, 200, "{}\n{}", answer.body, relay.stderr());
    // …and not even a string.
    redis.command(&["DEL", &epoch]);
    redis.command(&["RPUSH", &epoch, "garbage"]);
    let answer = post(&relay);
    assert_eq!(answer.status, 200, "{}\n{}", answer.body, relay.stderr());

    // The day's count was whole all along: nothing added twice, the cap holds exactly.
    let fourth = post(&relay);
    assert_eq!(
        (fourth.status, error_type(&fourth)),
        (429, "budget_exhausted".to_string()),
        "{}",
        fourth.body
    );
    assert_eq!(api.posts(), 3);
    assert_eq!(budget_status(&sb)["calls"], 3);
    let now = redis.command(&["GET", &epoch]).text().unwrap_or_default();
    assert!(
        !now.is_empty() && now.bytes().all(|b| b.is_ascii_digit()),
        "the epoch was rewritten: {now:?}"
    );
    assert!(
        relay.stderr().contains(&format!("{epoch} was unreadable")),
        "{}",
        relay.stderr()
    );
    let events = std::fs::read_to_string(sb.state_dir().join("events.jsonl")).unwrap_or_default();
    assert!(
        events.contains("\"event\":\"corrupt_state\"") && events.contains(&epoch),
        "{events}"
    );
}
