//! The team relay (DESIGN.md §14): replicas on separate state directories share one real
//! `redis-server`, so the team's budget, ledger and cooldowns are one, and a store that
//! goes away stops calls (or, if told, falls back) without a restart.

use std::thread;
use std::time::Duration;

use crate::relay::{ANTHROPIC_KEY, MODEL, TOKEN, messages_body};
use crate::support::redis::RedisServer;
use crate::support::relay::RelayProc;
use crate::support::{MockApi, Reply, Rule, Sandbox, wait};

pub(crate) const PREFIX: &str = "team-test";

/// One replica's own machine: its own HOME and state directory, the team's store.
pub(crate) fn replica(api: &MockApi, redis: &RedisServer, extra: &str) -> Sandbox {
    let sb = Sandbox::new();
    sb.env("AGENT_RELAY_TOKEN", TOKEN);
    sb.env("AGENT_RELAY_ANTHROPIC_KEY", ANTHROPIC_KEY);
    sb.env("AGENT_RELAY_ANTHROPIC_BASE", api.url());
    sb.write_config(&format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\nprefix = \"{PREFIX}\"\n{extra}\n",
        redis.url()
    ));
    sb
}

pub(crate) fn post(relay: &RelayProc) -> crate::support::relay::Answer {
    relay.post(
        "/anthropic/v1/messages",
        Some(TOKEN),
        &messages_body(MODEL),
        &[],
    )
}

#[test]
fn three_replicas_over_one_store_let_exactly_the_team_cap_through() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    // The calls that go upstream are held there until the cap's worth has arrived: all of
    // them are in flight at once while the others are refused.
    api.on(Rule::any().reply(Reply::ok().held("the cap is upstream")));
    let budget = "[budget]\ncalls = 20\ntokens = 0\n";
    let machines: Vec<Sandbox> = (0..3).map(|_| replica(&api, &redis, budget)).collect();
    let mut relays: Vec<RelayProc> = machines
        .iter()
        .map(|sb| RelayProc::start(sb, &[]))
        .collect();

    let answers: Vec<(u16, String)> = thread::scope(|scope| {
        let upstream = api.releasing("the cap is upstream");
        let handles: Vec<_> = (0..60)
            .map(|i| {
                let relay = &relays[i % 3];
                scope.spawn(move || {
                    let answer = post(relay);
                    let kind = if answer.status == 200 {
                        String::new()
                    } else {
                        answer.json()["error"]["type"]
                            .as_str()
                            .unwrap_or("")
                            .to_string()
                    };
                    (answer.status, kind)
                })
            })
            .collect();
        api.wait_for_posts(20);
        upstream.now();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let ok = answers.iter().filter(|(s, _)| *s == 200).count();
    let refused = answers
        .iter()
        .filter(|(s, kind)| *s == 429 && kind == "budget_exhausted")
        .count();
    assert_eq!((ok, refused), (20, 40), "{answers:?}");
    assert_eq!(
        api.posts(),
        20,
        "exactly the team's cap reached the upstream"
    );
    for relay in &mut relays {
        relay.stop();
    }
    let stream = redis.stream(&format!("{PREFIX}:ledger"));
    assert_eq!(stream.len(), 60, "one ledger line per call: {stream:?}");
    assert_eq!(
        stream.iter().filter(|line| line["refused"] == true).count(),
        40
    );
    // Each machine keeps its own lines too, and together they are the stream.
    let local: usize = machines
        .iter()
        .map(|sb| crate::relay::ledger(sb).len())
        .sum();
    assert_eq!(local, 60);
    // Every replica reads the team's figures from the store.
    let status = machines[1].run(&["--budget", "status", "--json"]);
    assert!(status.success(), "{}", status.stderr);
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(status["calls"], 20, "{status}");
}

#[test]
fn with_the_store_away_the_relay_refuses_and_sends_nothing_then_recovers_on_its_own() {
    let mut redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let sb = replica(&api, &redis, "");
    let relay = RelayProc::start(&sb, &[]);
    assert_eq!(post(&relay).status, 200);

    redis.stop();
    let refused = post(&relay);
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.json()["error"]["type"], "store_unavailable");
    assert_eq!(
        api.posts(),
        1,
        "nothing went upstream while the store was away"
    );

    redis.restart();
    wait::until("calls flowing again without a restart", || {
        post(&relay).status == 200
    });
    assert_eq!(api.posts(), 2);
}

#[test]
fn told_to_fall_back_the_relay_serves_through_an_outage_with_a_warning() {
    let mut redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let sb = replica(&api, &redis, "");
    let mut config = std::fs::read_to_string(sb.config_path()).unwrap();
    config = config.replace("[store]\n", "[store]\non_store_down = \"local\"\n");
    sb.write_config(&config);
    let relay = RelayProc::start(&sb, &[]);

    redis.stop();
    for _ in 0..3 {
        assert_eq!(post(&relay).status, 200);
    }
    assert_eq!(api.posts(), 3);
    wait::until(
        "the warning that the relay uses this machine's state files",
        || relay.stderr().contains("using this machine's state files"),
    );
    // The local budget counted them.
    let budget: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sb.state_dir().join("budget.json")).unwrap())
            .unwrap();
    let today = budget["days"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    assert_eq!(today["calls"], 3, "{budget}");
}

#[test]
fn the_doctor_asks_the_store_and_never_shows_its_password() {
    let mut redis = RedisServer::start();
    let sb = Sandbox::new();
    sb.write_config(&format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n",
        redis.url()
    ));
    let run = sb.run(&["--doctor"]);
    assert!(
        run.stdout.contains("ok   store") && run.stdout.contains("redis 7"),
        "{}",
        run.stdout
    );

    redis.stop();
    let run = sb.run(&["--doctor"]);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(run.stdout.contains("FAIL store"), "{}", run.stdout);

    // A password the server does not expect is refused; neither answer shows it.
    redis.restart();
    let password = "hunter2-STORE-PASSWORD-0123456789";
    sb.env(
        "AGENT_REDIS_URL",
        format!("redis://:{password}@127.0.0.1:{}", &redis.url()[18..]),
    );
    sb.write_config("[store]\nkind = \"redis\"\nurl = \"${AGENT_REDIS_URL}\"\n");
    for args in [&["--doctor"][..], &["--budget", "status"][..]] {
        let run = sb.run(args);
        assert!(
            !run.stdout.contains(password) && !run.stderr.contains(password),
            "{args:?} showed the password: {}{}",
            run.stdout,
            run.stderr
        );
    }
}

#[test]
fn a_store_without_a_url_is_refused_naming_the_key() {
    let sb = Sandbox::new();
    sb.write_config("[store]\nkind = \"redis\"\n");
    let run = sb.run(&["--status"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("store.url"), "{}", run.stderr);
}

/// The upstream's health record for [`MODEL`], from the store's shared document.
fn shared_upstream_health(redis: &RedisServer, api: &MockApi) -> Option<serde_json::Value> {
    let text = redis
        .command(&["GET", &format!("{PREFIX}:health.json")])
        .text()?;
    let health: serde_json::Value = serde_json::from_str(&text).ok()?;
    health["targets"]
        .as_object()?
        .iter()
        .find(|(name, _)| name.contains(&api.url()) && name.contains(MODEL))
        .map(|(_, record)| record.clone())
}

#[test]
fn a_429_learned_on_one_machine_stops_the_other_replicas_then_one_call_restores_it() {
    use crate::relay_shared_health::{
        COOLDOWN, FRESH_FOR, call, call_counted, retry_after, sleep_until_ms,
    };
    let redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let machines: Vec<Sandbox> = (0..3).map(|_| replica(&api, &redis, "")).collect();
    let replicas: Vec<RelayProc> = machines
        .iter()
        .map(|sb| RelayProc::start(sb, &[]))
        .collect();
    let (a, b, c) = (&replicas[0], &replicas[1], &replicas[2]);
    assert_eq!(call(b, MODEL).status, 200);
    assert_eq!(call(c, MODEL).status, 200);
    api.clear_rules();
    api.on(Rule::model(MODEL).reply(
        Reply::anthropic_error(429, "rate_limit_error", "Number of requests exceeded")
            .header("retry-after", &COOLDOWN.to_string()),
    ));
    let health_once = |what: &str, holds: &dyn Fn(&serde_json::Value) -> bool| {
        wait::for_some(what, || {
            shared_upstream_health(&redis, &api).filter(|h| holds(h))
        })
    };

    assert_eq!(call(a, MODEL).status, 429);
    // Once the store has it and what they hold has gone stale, the other machines know,
    // without a call of their own to learn it.
    let until = health_once("the cooldown in the store", &|h| {
        h["cooldown_until_ms"].is_u64()
    })["cooldown_until_ms"]
        .as_u64()
        .unwrap();
    thread::sleep(FRESH_FOR);
    let sent = api.posts();
    for other in [b, c] {
        let (refused, went_up) = call_counted(other, &api);
        assert!(
            !went_up,
            "another machine's replica called once the store had A's 429"
        );
        assert_eq!(refused.status, 429);
        assert!((1..=COOLDOWN).contains(&retry_after(&refused)));
    }
    for replica in [a, b, c] {
        assert!(
            !call_counted(replica, &api).1,
            "a call went up during the cooldown"
        );
    }
    assert_eq!(api.posts(), sent);

    // After the reset instant, one half-open call, held upstream until the others have
    // been turned away.
    api.clear_rules();
    api.on(Rule::model(MODEL).reply(Reply::ok().held("the others were turned away")));
    sleep_until_ms(until);
    let before = api.posts();
    let statuses: Vec<u16> = thread::scope(|scope| {
        let others_turned_away = api.releasing("the others were turned away");
        let handles: Vec<_> = replicas
            .iter()
            .chain(replicas.iter())
            .map(|replica| scope.spawn(move || call(replica, MODEL).status))
            .collect();
        wait::until("five of the six calls answered", || {
            handles.iter().filter(|h| h.is_finished()).count() == 5
        });
        others_turned_away.now();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        api.posts() - before,
        1,
        "one half-open call, not {statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    health_once("the restored upstream in the store", &|h| {
        h["class"] == "ok"
    });
    thread::sleep(FRESH_FOR);
    for replica in [a, b, c] {
        assert!(call_counted(replica, &api).1, "the target was not restored");
    }
}

/// A call with `body`, as a client sees it: `None` when the connection closed before an
/// answer began (its replica died).
fn post_raw(relay: &RelayProc, body: &str) -> Option<crate::support::relay::Answer> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(&relay.addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .ok()?;
    let request = format!(
        "POST /anthropic/v1/messages HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nx-api-key: {TOKEN}\r\nconnection: close\r\n\r\n{body}",
        relay.addr,
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    text.contains("\r\n\r\n")
        .then(|| crate::support::relay::parse(&text))
}

/// A streamed call (see [`post_raw`]).
fn post_stream(relay: &RelayProc) -> Option<crate::support::relay::Answer> {
    let mut body: serde_json::Value = serde_json::from_str(&messages_body(MODEL)).unwrap();
    body["stream"] = serde_json::Value::Bool(true);
    post_raw(relay, &body.to_string())
}

#[test]
fn a_replica_killed_mid_stream_leaves_the_others_serving_and_the_books_apart_by_its_calls_in_flight()
 {
    const PER_REPLICA: usize = 4;
    let redis = RedisServer::start();
    let api = MockApi::start();
    // Every stream stops after its first two events until the replica has died: every
    // call is in flight then.
    api.on(Rule::any().reply(Reply::ok().pause_after(2, "killed")));
    let budget = "[budget]\ncalls = 1000\ntokens = 0\n";
    let machines: Vec<Sandbox> = (0..3).map(|_| replica(&api, &redis, budget)).collect();
    let mut relays: Vec<RelayProc> = machines
        .iter()
        .map(|sb| RelayProc::start(sb, &[]))
        .collect();

    let survivors: Vec<_> = thread::scope(|scope| {
        let killed = api.releasing("killed");
        let calls: Vec<_> = (0..3 * PER_REPLICA)
            .map(|i| {
                let relay = &relays[i % 3];
                (i % 3, scope.spawn(move || post_stream(relay)))
            })
            .collect();
        // Every call went upstream.
        api.wait_for_posts(3 * PER_REPLICA);
        relays[0].kill9();
        killed.now();
        calls
            .into_iter()
            .filter(|(replica, _)| *replica != 0)
            .map(|(_, call)| call.join().unwrap())
            .collect()
    });

    for answer in &survivors {
        let answer = answer.as_ref().expect("a surviving replica answered");
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(
            answer.body.contains("message_stop"),
            "the stream ran to its end: {}",
            answer.body
        );
    }
    for relay in &relays[1..] {
        for _ in 0..3 {
            assert_eq!(post(relay).status, 200, "new calls are served");
        }
    }
    for relay in &mut relays[1..] {
        relay.stop();
    }

    let ledger = redis
        .stream(&format!("{PREFIX}:ledger"))
        .iter()
        .filter(|line| line["refused"] != true)
        .count();
    let status = machines[1].run(&["--budget", "status", "--json"]);
    assert!(status.success(), "{}", status.stderr);
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    let counted = usize::try_from(status["calls"].as_u64().unwrap()).unwrap();
    let finished: usize = machines[1..]
        .iter()
        .map(|sb| crate::relay::ledger(sb).len())
        .sum();
    assert_eq!(
        finished,
        2 * PER_REPLICA + 6,
        "the survivors wrote a line for every call they served"
    );
    assert!(ledger >= finished, "the stream has the survivors' lines");
    // The killed replica's reservations are counted; its lines died with it.
    let apart = counted.checked_sub(ledger).unwrap_or_else(|| {
        panic!("the budget counted fewer calls ({counted}) than the ledger holds ({ledger})")
    });
    eprintln!("budget {counted}, ledger {ledger}: apart by {apart}");
    assert!(
        apart <= PER_REPLICA,
        "apart by at most the killed replica's {PER_REPLICA} calls in flight, not {apart}"
    );
}

#[test]
fn a_command_the_server_refuses_is_not_an_outage() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let sb = replica(&api, &redis, "");
    // The ledger's key holds a string: every append to the stream is refused (WRONGTYPE),
    // while the server itself answers everything else.
    redis.command(&["SET", &format!("{PREFIX}:ledger"), "not a stream"]);
    let relay = RelayProc::start(&sb, &[]);
    let statuses: Vec<u16> = (0..8)
        .map(|_| {
            thread::sleep(Duration::from_millis(30));
            post(&relay).status
        })
        .collect();
    assert_eq!(statuses, vec![200; 8], "{}", relay.stderr());
    assert_eq!(api.posts(), 8);
}

#[test]
fn usage_with_since_reads_the_team_stream_from_the_window_on() {
    let redis = RedisServer::start();
    let sb = Sandbox::new();
    sb.write_config(&format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\nprefix = \"{PREFIX}\"\n",
        redis.url()
    ));
    let today = jiff::ZonedDateTime::now().date().to_string();
    let line = |run: &str| {
        serde_json::json!({"time": jiff::Timestamp::now().to_string(), "run": run,
            "backend": "relay:anthropic", "model": MODEL, "upstream": "anthropic",
            "role": "relay", "status": 200, "error_kind": "ok",
            "tokens": {"input": 10, "output": 5}, "day": today})
        .to_string()
    };
    let key = format!("{PREFIX}:ledger");
    // An entry the server added in 2001 (its id is its clock then), and one added now.
    redis.command(&["XADD", &key, "1000000000000-0", "j", &line("old-entry")]);
    redis.command(&["XADD", &key, "*", "j", &line("new-entry")]);

    let calls = |args: &[&str]| {
        let run = sb.run(args);
        assert!(run.success(), "{}", run.stderr);
        let document: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        document["total"]["calls"].as_u64().unwrap()
    };
    assert_eq!(calls(&["--usage", "--source", "agent", "--json"]), 2);
    assert_eq!(
        calls(&["--usage", "--source", "agent", "--since", &today, "--json"]),
        1,
        "the entries before the window were not read"
    );
}

/// `agent --budget status --json` on `sb`.
pub(crate) fn budget_status(sb: &Sandbox) -> serde_json::Value {
    let status = sb.run(&["--budget", "status", "--json"]);
    assert!(status.success(), "{}", status.stderr);
    serde_json::from_str(&status.stdout).unwrap()
}

/// Waits until every machine knows all of the team's relay replicas (each learns them from
/// the store within a second of their joining): whom a rebuild waits for.
fn wait_until_each_knows_the_replicas(machines: &[Sandbox], redis: &RedisServer) {
    for sb in machines {
        let knows_them = wait::eventually(|| {
            store_json(sb)
                .and_then(|doc| doc["replicas"].as_array().map(Vec::len))
                .is_some_and(|known| known == machines.len())
        });
        assert!(
            knows_them,
            "store.json: {:?}; the store's: {:?} {:?} {:?}",
            std::fs::read_to_string(sb.state_dir().join("store.json")),
            redis.command(&["SMEMBERS", &format!("{PREFIX}:epoch:replicas")]),
            redis.command(&["SMEMBERS", &format!("{PREFIX}:epoch:joined")]),
            redis.command(&["GET", &format!("{PREFIX}:epoch")]),
        );
    }
}

/// What `sb`'s machine remembers of the store (`store.json`), once it is written.
fn store_json(sb: &Sandbox) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(sb.state_dir().join("store.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Each answer's status, with the error type when it is not 200.
fn statuses(relays: &[RelayProc], order: &[usize]) -> Vec<(u16, String)> {
    order
        .iter()
        .map(|&i| {
            let answer = post(&relays[i]);
            let kind = if answer.status == 200 {
                String::new()
            } else {
                answer.json()["error"]["type"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            };
            (answer.status, kind)
        })
        .collect()
}

#[test]
fn a_store_that_forgot_mid_day_is_rebuilt_before_serving_and_keeps_the_caps_set_by_hand() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    // The configured caps are the defaults (500 calls): the team's 10 are set by hand.
    let machines: Vec<Sandbox> = (0..3).map(|_| replica(&api, &redis, "")).collect();
    let relays: Vec<RelayProc> = machines
        .iter()
        .map(|sb| RelayProc::start(sb, &[]))
        .collect();
    let set = machines[0].run(&["--budget", "set", "--calls", "10", "--tokens", "0"]);
    assert!(set.success(), "{}", set.stderr);

    // Four calls on the first machine, three on each of the others: the cap is spent.
    let before = statuses(&relays, &[0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 1]);
    assert_eq!(
        before.iter().filter(|(s, _)| *s == 200).count(),
        10,
        "{before:?}"
    );
    assert_eq!(before[10], (429, "budget_exhausted".into()));
    wait_until_each_knows_the_replicas(&machines, &redis);

    redis.flushall();
    // The machine that spent the most asks first, before the others have looked again.
    let after = statuses(&relays, &[0, 0, 0, 1, 2, 0, 1, 2]);
    assert_eq!(
        after,
        vec![(429, "budget_exhausted".to_string()); 8],
        "{}",
        relays[0].stderr()
    );
    assert_eq!(api.posts(), 10, "no call past the cap reached the upstream");
    let status = budget_status(&machines[2]);
    assert_eq!(status["calls"], 10, "{status}");
    assert_eq!(
        status["limits"]["calls"], 10,
        "the caps set by hand came back: {status}"
    );
    assert_eq!(status["limits_from"], "set", "{status}");
}

#[test]
fn calls_in_flight_when_the_store_forgets_still_count() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let budget = "[budget]\ncalls = 6\ntokens = 0\n";
    let machines: Vec<Sandbox> = (0..3).map(|_| replica(&api, &redis, budget)).collect();
    let relays: Vec<RelayProc> = machines
        .iter()
        .map(|sb| RelayProc::start(sb, &[]))
        .collect();
    // One call each: every replica has joined, and knows the others.
    assert!(statuses(&relays, &[0, 1, 2]).iter().all(|(s, _)| *s == 200));
    wait_until_each_knows_the_replicas(&machines, &redis);

    // Three more, held upstream while the store forgets and until every machine has
    // rejoined it, so their lines are in no ledger yet when the counts are brought back.
    api.clear_rules();
    api.on(Rule::any().reply(Reply::ok().held("rejoined")));
    let slow: Vec<u16> = thread::scope(|scope| {
        let rejoined = api.releasing("rejoined");
        let calls: Vec<_> = relays
            .iter()
            .map(|relay| scope.spawn(move || post(relay).status))
            .collect();
        api.wait_for_posts(6);
        redis.flushall();
        wait::until("every machine in the store's new epoch", || {
            let epoch = redis.command(&["GET", &format!("{PREFIX}:epoch")]).text();
            epoch.is_some()
                && machines
                    .iter()
                    .all(|sb| store_json(sb).map(|doc| doc["epoch"].to_string()) == epoch)
        });
        rejoined.now();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    assert_eq!(slow, vec![200; 3]);

    api.clear_rules();
    api.on(Rule::any().reply(Reply::ok()));
    let after = statuses(&relays, &[0, 1, 2, 0, 1, 2]);
    assert_eq!(
        after,
        vec![(429, "budget_exhausted".to_string()); 6],
        "{}",
        relays.iter().map(RelayProc::stderr).collect::<String>()
    );
    assert_eq!(
        api.posts(),
        6,
        "the team's cap, counted across the store's forgetting"
    );
    assert_eq!(budget_status(&machines[0])["calls"], 6);
}

#[test]
fn a_store_paused_while_a_call_was_upstream_gets_its_tokens_and_ledger_line_when_it_answers() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    let sb = replica(&api, &redis, "");
    let relay = RelayProc::start(&sb, &[]);
    assert_eq!(post(&relay).status, 200);

    // The second call is held upstream until the store is paused.
    api.on(Rule::any().reply(Reply::ok().held("paused")));
    let answer = thread::scope(|scope| {
        let paused = api.releasing("paused");
        let call = scope.spawn(|| post(&relay));
        api.wait_for_posts(2);
        redis.pause();
        paused.now();
        call.join().unwrap()
    });
    assert_eq!(answer.status, 200, "the client has its answer");
    // The books found the store away and keep what the call spent.
    wait::until("the relay saying it will wait for the store", || {
        relay.stderr().contains("wait for it")
    });
    redis.resume();

    let ledger = format!("{PREFIX}:ledger");
    let delivered =
        wait::eventually(|| redis.stream_len(&ledger) == 2 && budget_status(&sb)["tokens"] == 18);
    let status = budget_status(&sb);
    assert!(
        delivered,
        "the store never got the call: {status}, {:?}\n{}",
        redis.stream(&ledger),
        relay.stderr()
    );
    assert_eq!(status["calls"], 2, "{status}");
}

#[test]
fn connections_the_server_dropped_are_made_again_without_refusing_a_call() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let machines: Vec<Sandbox> = (0..3).map(|_| replica(&api, &redis, "")).collect();
    let relays: Vec<RelayProc> = machines
        .iter()
        .map(|sb| RelayProc::start(sb, &[]))
        .collect();
    assert!(statuses(&relays, &[0, 1, 2]).iter().all(|(s, _)| *s == 200));
    // What a restart does to every open connection, without the moment it is down.
    redis.command(&["CLIENT", "KILL", "TYPE", "normal"]);
    let after = statuses(&relays, &[0, 1, 2]);
    assert_eq!(after, vec![(200, String::new()); 3]);
    assert_eq!(api.posts(), 6);
}

#[test]
fn a_redis_restart_costs_no_refused_call_once_it_is_up() {
    let mut redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let machines: Vec<Sandbox> = (0..3).map(|_| replica(&api, &redis, "")).collect();
    let relays: Vec<RelayProc> = machines
        .iter()
        .map(|sb| RelayProc::start(sb, &[]))
        .collect();
    assert!(statuses(&relays, &[0, 1, 2]).iter().all(|(s, _)| *s == 200));
    wait_until_each_knows_the_replicas(&machines, &redis);

    // Up again, empty (no persistence): stale connections, and a store that forgot.
    redis.restart();
    let after = statuses(&relays, &[0, 1, 2, 0, 1, 2]);
    assert_eq!(after, vec![(200, String::new()); 6]);
    assert_eq!(api.posts(), 9);
    assert_eq!(
        budget_status(&machines[1])["calls"],
        9,
        "the count came back"
    );
}

#[test]
fn a_stall_shorter_than_the_command_timeout_is_waited_out() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let sb = replica(&api, &redis, "");
    let relay = RelayProc::start(&sb, &[]);
    assert_eq!(post(&relay).status, 200);

    redis.pause();
    let answers: Vec<u16> = thread::scope(|scope| {
        let calls: Vec<_> = (0..6)
            .map(|_| scope.spawn(|| post(&relay).status))
            .collect();
        // A one-second stall: under the two seconds a command may take.
        thread::sleep(Duration::from_secs(1));
        redis.resume();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    assert_eq!(answers, vec![200; 6], "{}", relay.stderr());
    assert_eq!(api.posts(), 7);
}

#[test]
fn a_batch_the_paused_store_ran_late_is_not_counted_again_when_it_is_sent_again() {
    use agent::config::store::{OnStoreDown, RedisStore};
    use agent::state::budget::{epoch, on_store::Owed, outbox::Outbox};
    use agent::state::store::Shared;
    let redis = RedisServer::start();
    let store = RedisStore {
        url: redis.url(),
        prefix: PREFIX.into(),
        on_store_down: OnStoreDown::Refuse,
    };
    let shared = Shared::new(&store, OnStoreDown::Refuse).unwrap();
    let state = tempfile::tempdir().unwrap();
    let day = agent::state::budget::today();
    let now = epoch::rejoin(&shared, state.path(), &day).unwrap();
    let line = |run: &str| serde_json::json!({"run": run, "day": day}).to_string();
    let owed = |tokens| Owed {
        day: day.clone(),
        client: None,
        epoch: now,
        tokens,
    };
    let mut outbox = Outbox::default();
    outbox.add(now, vec![line("first")], vec![owed(5)]);
    outbox.deliver(&shared, state.path());
    assert!(outbox.is_empty());

    // Sent to a server that holds it unanswered: it runs when the server wakes, after this
    // side gave up on it, and is sent again.
    redis.pause();
    outbox.add(now, vec![line("second")], vec![owed(7)]);
    outbox.deliver(&shared, state.path());
    assert!(!outbox.is_empty(), "kept for the next try");
    redis.resume();
    wait::until("the batch delivered", || {
        outbox.deliver(&shared, state.path());
        outbox.is_empty()
    });
    let runs: Vec<serde_json::Value> = redis
        .stream(&format!("{PREFIX}:ledger"))
        .iter()
        .map(|line| line["run"].clone())
        .collect();
    assert_eq!(runs, ["first", "second"], "each line once");
    let tokens = redis
        .command(&["HGET", &format!("{PREFIX}:budget:{day}"), "tokens"])
        .text();
    assert_eq!(tokens.as_deref(), Some("12"), "each batch's tokens once");
}

/// Where the three replicas of [`sixty_calls_around_a_flushall`] keep their state, and
/// whether one of them dies with its calls in flight before the store forgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// A home (a state directory) each.
    OwnHomes,
    /// One home for all three: one `usage.jsonl`, written by each as its calls finish.
    OneHome,
    /// One home, and the first replica `kill -9`ed while its calls are upstream.
    OneHomeOneKilled,
}

/// A call's status as its client sees it (see [`post_raw`]).
fn post_status(relay: &RelayProc) -> Option<u16> {
    post_raw(relay, &messages_body(MODEL)).map(|answer| answer.status)
}

/// Thirty calls spread over three replicas, the store forgetting while the cap's worth of
/// them is upstream, then thirty more: the upstream sees the team's cap, no more.
fn sixty_calls_around_a_flushall(layout: Layout) {
    const CAP: usize = 20;
    let redis = RedisServer::start();
    let api = MockApi::start();
    // Every call is held upstream until the store has forgotten (and the killed replica is
    // dead): what is in flight then is known, whatever the machine's load.
    api.on(Rule::any().reply(Reply::ok().held("forgotten")));
    let budget = format!("[budget]\ncalls = {CAP}\ntokens = 0\n");
    let homes = if layout == Layout::OwnHomes { 3 } else { 1 };
    let machines: Vec<Sandbox> = (0..homes).map(|_| replica(&api, &redis, &budget)).collect();
    let relays: Vec<RelayProc> = (0..3)
        .map(|i| RelayProc::start(&machines[i % homes], &[]))
        .collect();
    let burst = |from: usize, to: &[usize]| {
        let relays = &relays;
        thread::scope(|scope| {
            let calls: Vec<_> = (from..from + 30)
                .map(|i| scope.spawn(move || post_status(&relays[to[i % to.len()]])))
                .collect();
            calls
                .into_iter()
                .map(|c| c.join().unwrap())
                .collect::<Vec<Option<u16>>>()
        })
    };
    // The store forgets while the first burst's calls are in flight, then a second burst.
    let first = thread::scope(|scope| {
        let forgotten = api.releasing("forgotten");
        let first = scope.spawn(|| burst(0, &[0, 1, 2]));
        api.wait_for_posts(CAP);
        if layout == Layout::OneHomeOneKilled {
            relays[0].kill9();
        }
        redis.flushall();
        forgotten.now();
        first.join().unwrap()
    });
    let survivors: &[usize] = if layout == Layout::OneHomeOneKilled {
        &[1, 2]
    } else {
        &[0, 1, 2]
    };
    let second = burst(30, survivors);
    let all: Vec<Option<u16>> = first.into_iter().chain(second).collect();
    let stderr: String = relays.iter().map(RelayProc::stderr).collect();
    assert_eq!(api.posts(), CAP, "{all:?}\n{stderr}");
    let ok = all.iter().filter(|s| **s == Some(200)).count();
    let died = all.iter().filter(|s| s.is_none()).count();
    assert!(
        all.iter().all(|s| matches!(s, None | Some(200 | 429))),
        "{all:?}"
    );
    // Every answered call was counted, and no more than the cap answered. A call the killed
    // replica held had either reached upstream (counted: one of the cap's) or not yet been
    // reserved (never counted), so the answered and the dead ones together cover the cap.
    assert!(ok <= CAP && ok + died >= CAP, "{all:?}");
    if layout != Layout::OneHomeOneKilled {
        assert_eq!(died, 0, "{all:?}");
    }
    assert_eq!(budget_status(&machines[0])["calls"], CAP, "{stderr}");
}

#[test]
fn sixty_calls_over_three_replicas_around_a_flushall_never_pass_the_cap() {
    sixty_calls_around_a_flushall(Layout::OwnHomes);
}

#[test]
fn sixty_calls_over_three_replicas_in_one_home_around_a_flushall_never_pass_the_cap() {
    sixty_calls_around_a_flushall(Layout::OneHome);
}

#[test]
fn sixty_calls_around_a_flushall_after_a_replica_died_with_calls_in_flight_never_pass_the_cap() {
    sixty_calls_around_a_flushall(Layout::OneHomeOneKilled);
}
