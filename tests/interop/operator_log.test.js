// The operator log of the real daemon, seen by a node-opcua (2.182.2) client's actions: a connection,
// a session (with the client's application name), a failed login whose password never appears in the
// log, the session closed and the connection closed, each one line of key=value fields.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { SecurityPolicy, UserTokenType } = require("node-opcua");
const { startDaemon, until, plainClient } = require("./daemon");

const PASSWORD = "correct horse battery staple";
const WRONG = "Tr0ub4dor&3-never-in-the-log";

test("connection, session and failed-login events; no password in the log", async () => {
  const daemon = await startDaemon({ users: [["operator", PASSWORD]] });
  const client = plainClient({ applicationName: "Interop Log Client" });
  try {
    await client.connect(daemon.url);
    await assert.rejects(client.createSession({ type: UserTokenType.UserName, userName: "operator", password: WRONG }));
    const session = await client.createSession({ type: UserTokenType.UserName, userName: "operator", password: PASSWORD });
    await session.close();
    await client.disconnect();
    await until(() => /event=connection\.closed /.test(daemon.output()), "connection.closed");
  } finally {
    const { code } = await daemon.stop();
    assert.equal(code, 0);
  }
  const log = daemon.output();
  assert.ok(!log.includes(WRONG), "the wrong password is not logged");
  assert.ok(!log.includes(PASSWORD), "the right password is not logged");
  assert.match(log, /info {2}event=connection\.accepted peer=127\.0\.0\.1:\d+ shard=\d+\n/);
  assert.match(log, /info {2}event=channel\.opened peer=127\.0\.0\.1 channel=\d+ policy=http:\/\/opcfoundation\.org\/UA\/SecurityPolicy#None mode=None\n/);
  assert.match(log, /warn {2}event=login\.failed user=operator peer=127\.0\.0\.1 status=BadUserAccessDenied\n/);
  assert.match(log, /info {2}event=session\.created session=\S+ name=\S+ user="" application="Interop Log Client" application_uri=(?:"[^"\n]*"|\S+) peer=127\.0\.0\.1\n/);
  assert.match(log, /info {2}event=session\.activated session=\S+ name=\S+ user=operator application="Interop Log Client" /);
  assert.match(log, /info {2}event=session\.closed session=\S+ name=\S+ user=operator /);
  assert.match(log, /info {2}event=connection\.closed peer=127\.0\.0\.1:\d+ shard=\d+ channel=\d+ reason=(closed|peer_closed)\n/);
});
