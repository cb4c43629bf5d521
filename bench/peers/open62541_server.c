/* A comparison server for opcuad-bench --compare URL, built on open62541's public API (1.4).
 *
 * It exposes what the harness reads and writes (docs/PERFORMANCE.md, "Comparing with other servers"):
 * namespace urn:opcuad:bench, the folder ns=2;s=Bench under Objects, writable Doubles
 * ns=2;s=Bench.V1 .. VN, and read-only Double counters ns=2;i=1..N stepped by 1 every
 * COUNTER_MS milliseconds (0: never) for the sub scenario. With a certificate and key it offers
 * every security policy open62541 has and accepts any client certificate, like the node-opcua peer.
 *
 * It is not part of the build and no test uses it. Build it against open62541 1.4 (checked with v1.4.19,
 * namespace 0 REDUCED, the default, which needs no submodule), with S its source tree and B its build:
 *
 *   cmake -S $S -B $B -DCMAKE_BUILD_TYPE=Release -DUA_ENABLE_ENCRYPTION=OPENSSL -DBUILD_SHARED_LIBS=OFF \
 *         -DUA_ENABLE_AMALGAMATION=OFF -DUA_LOGLEVEL=400 -DUA_ENABLE_DISCOVERY_MULTICAST=OFF
 *   cmake --build $B -j 1
 *   cc -O3 -o $B/open62541_server bench/peers/open62541_server.c -I$S/include -I$S/plugins/include \
 *      -I$B/src_generated $B/bin/libopen62541.a -lssl -lcrypto -lpthread
 *
 * (In 1.4, 300 is INFO and 400 WARNING. The Release library holds LTO objects, so the link compiles it:
 * -O3 matches its flags.) A certificate and key in DER for the secured endpoints; any RSA 2048 pair
 * does, since the checks accept everything:
 *
 *   openssl req -x509 -newkey rsa:2048 -sha256 -days 3650 -nodes -keyout key.pem -out cert.pem \
 *     -subj "/CN=open62541 bench peer" -addext "subjectAltName=URI:urn:open62541.server.application" \
 *     -addext "keyUsage=critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment"
 *   openssl x509 -in cert.pem -outform DER -out cert.der
 *   openssl rsa -in key.pem -traditional -outform DER -out key.der
 *
 * and opcuad-bench ... --compare opc.tcp://127.0.0.1:PORT --security None,Basic256Sha256:SignAndEncrypt
 * --server-certificate cert.der --client-pki DIR.
 *
 * Usage: open62541_server PORT NODES COUNTER_MS [CERT.der KEY.der]
 */
#include <open62541/plugin/log_stdout.h>
#include <open62541/plugin/pki_default.h>
#include <open62541/server.h>
#include <open62541/server_config_default.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile UA_Boolean running = true;
static UA_UInt32 nodes = 100;
static UA_UInt16 ns = 2;

static void on_signal(int sig) {
  (void)sig;
  running = false;
}

static UA_ByteString read_file(const char *path) {
  UA_ByteString out = UA_BYTESTRING_NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return out;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (size > 0) {
    out.data = (UA_Byte *)UA_malloc((size_t)size);
    if (out.data && fread(out.data, 1, (size_t)size, f) == (size_t)size) {
      out.length = (size_t)size;
    } else {
      UA_free(out.data);
      out.data = NULL;
    }
  }
  fclose(f);
  return out;
}

/* Steps every counter ns=2;i=1..N by one, through the server's own write path so monitored items see it. */
static void step_counters(UA_Server *server, void *data) {
  (void)data;
  for (UA_UInt32 i = 1; i <= nodes; ++i) {
    UA_Variant v;
    UA_Double current = 0;
    UA_Variant_init(&v);
    if (UA_Server_readValue(server, UA_NODEID_NUMERIC(ns, i), &v) == UA_STATUSCODE_GOOD &&
        UA_Variant_hasScalarType(&v, &UA_TYPES[UA_TYPES_DOUBLE]))
      current = *(UA_Double *)v.data;
    UA_Variant_clear(&v);
    current += 1;
    /* The harness counts distinct source timestamps, so every step carries its own. */
    UA_DataValue dv;
    UA_DataValue_init(&dv);
    UA_Variant_setScalar(&dv.value, &current, &UA_TYPES[UA_TYPES_DOUBLE]);
    dv.hasValue = true;
    dv.sourceTimestamp = UA_DateTime_now();
    dv.hasSourceTimestamp = true;
    UA_Server_writeDataValue(server, UA_NODEID_NUMERIC(ns, i), dv);
  }
}

static int add_nodes(UA_Server *server) {
  UA_ObjectAttributes folder = UA_ObjectAttributes_default;
  folder.displayName = UA_LOCALIZEDTEXT("en", "Bench");
  const UA_NodeId folder_id = UA_NODEID_STRING(ns, "Bench");
  if (UA_Server_addObjectNode(server, folder_id, UA_NODEID_NUMERIC(0, UA_NS0ID_OBJECTSFOLDER),
                              UA_NODEID_NUMERIC(0, UA_NS0ID_ORGANIZES), UA_QUALIFIEDNAME(ns, "Bench"),
                              UA_NODEID_NUMERIC(0, UA_NS0ID_FOLDERTYPE), folder, NULL, NULL) != UA_STATUSCODE_GOOD)
    return 1;
  char name[32];
  char id[40];
  for (UA_UInt32 i = 1; i <= nodes; ++i) {
    snprintf(name, sizeof name, "V%u", i);
    snprintf(id, sizeof id, "Bench.V%u", i);
    UA_VariableAttributes a = UA_VariableAttributes_default;
    UA_Double zero = 0;
    UA_Variant_setScalar(&a.value, &zero, &UA_TYPES[UA_TYPES_DOUBLE]);
    a.dataType = UA_TYPES[UA_TYPES_DOUBLE].typeId;
    a.accessLevel = UA_ACCESSLEVELMASK_READ | UA_ACCESSLEVELMASK_WRITE;
    a.userAccessLevel = a.accessLevel;
    a.displayName = UA_LOCALIZEDTEXT("en", name);
    if (UA_Server_addVariableNode(server, UA_NODEID_STRING(ns, id), folder_id,
                                  UA_NODEID_NUMERIC(0, UA_NS0ID_HASCOMPONENT), UA_QUALIFIEDNAME(ns, name),
                                  UA_NODEID_NUMERIC(0, UA_NS0ID_BASEDATAVARIABLETYPE), a, NULL,
                                  NULL) != UA_STATUSCODE_GOOD)
      return 1;
    snprintf(name, sizeof name, "C%u", i);
    UA_VariableAttributes c = UA_VariableAttributes_default;
    UA_Double start = 0;
    UA_Variant_setScalar(&c.value, &start, &UA_TYPES[UA_TYPES_DOUBLE]);
    c.dataType = UA_TYPES[UA_TYPES_DOUBLE].typeId;
    c.accessLevel = UA_ACCESSLEVELMASK_READ;
    c.userAccessLevel = c.accessLevel;
    c.displayName = UA_LOCALIZEDTEXT("en", name);
    if (UA_Server_addVariableNode(server, UA_NODEID_NUMERIC(ns, i), folder_id,
                                  UA_NODEID_NUMERIC(0, UA_NS0ID_HASCOMPONENT), UA_QUALIFIEDNAME(ns, name),
                                  UA_NODEID_NUMERIC(0, UA_NS0ID_BASEDATAVARIABLETYPE), c, NULL,
                                  NULL) != UA_STATUSCODE_GOOD)
      return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 6) {
    fprintf(stderr, "usage: %s PORT NODES COUNTER_MS [CERT.der KEY.der]\n", argv[0]);
    return 2;
  }
  const UA_UInt16 port = (UA_UInt16)atoi(argv[1]);
  nodes = (UA_UInt32)strtoul(argv[2], NULL, 10);
  const double counter_ms = atof(argv[3]);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);

  /* The configuration is built before the server exists: UA_Server_new() would already hold a default
   * one (a None policy and endpoint on port 4840), and configuring that again appends a second None
   * policy and endpoint instead of replacing them. */
  UA_ServerConfig config;
  memset(&config, 0, sizeof config);
  config.logging = UA_Log_Stdout_new(UA_LOGLEVEL_WARNING);
  /* The accept-all certificate check logs a warning for every certificate it accepts, so for every
   * secured channel and session; it gets a logger of its own that shows errors only. */
  UA_Logger *quiet = UA_Log_Stdout_new(UA_LOGLEVEL_ERROR);
  UA_StatusCode rc;
  if (argc == 6) {
    UA_ByteString cert = read_file(argv[4]);
    UA_ByteString key = read_file(argv[5]);
    if (!cert.length || !key.length) {
      fprintf(stderr, "cannot read %s or %s\n", argv[4], argv[5]);
      return 1;
    }
    /* Every policy open62541 has (None included), an endpoint for each policy and mode. */
    rc = UA_ServerConfig_setDefaultWithSecurityPolicies(&config, port, &cert, &key, NULL, 0, NULL, 0, NULL, 0);
    UA_ByteString_clear(&cert);
    UA_ByteString_clear(&key);
    /* An empty trust list refuses every certificate: accept any client certificate instead. */
    if (rc == UA_STATUSCODE_GOOD) {
      UA_CertificateVerification_AcceptAll(&config.secureChannelPKI);
      UA_CertificateVerification_AcceptAll(&config.sessionPKI);
    }
  } else {
    rc = UA_ServerConfig_setMinimal(&config, port, NULL);
  }
  if (rc != UA_STATUSCODE_GOOD) {
    fprintf(stderr, "configuration failed: %s\n", UA_StatusCode_name(rc));
    return 1;
  }
  config.secureChannelPKI.logging = quiet;
  config.sessionPKI.logging = quiet;
  /* The harness's load: 10 sessions x 10 requests in flight, Read and Write of up to 1,000 values;
   * the connect and storm scenarios open more. */
  config.maxSessions = 1000;
  config.maxSecureChannels = 1000;

  UA_Server *server = UA_Server_newWithConfig(&config);
  if (!server) {
    fprintf(stderr, "cannot create the server\n");
    return 1;
  }
  ns = UA_Server_addNamespace(server, "urn:opcuad:bench");
  if (ns != 2 || add_nodes(server)) {
    fprintf(stderr, "cannot add the bench nodes (namespace index %u)\n", ns);
    UA_Server_delete(server);
    return 1;
  }
  if (counter_ms > 0) UA_Server_addRepeatedCallback(server, step_counters, NULL, counter_ms, NULL);
  rc = UA_Server_run(server, &running);
  UA_Server_delete(server);
  quiet->clear(quiet);
  return rc == UA_STATUSCODE_GOOD ? 0 : 1;
}
