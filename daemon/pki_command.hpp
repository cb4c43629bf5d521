#pragma once
// The `opcuad pki` subcommands (docs/SECURITY.md, "Certificates and trust"), independent of any argument
// parser. Each works on the folders of a PKI directory, never on a running daemon: a daemon picks up
// trust changes by itself within a second, and a regenerated own certificate at its next start.
//
// Registering them (daemon/main.cpp, CLI11):
//   const auto settings = [&] { return opcuad::config::pki_settings(loaded_config); };  //
//   config/pki_settings.hpp auto* pki = app.add_subcommand("pki", "manage certificates and trust
//   lists")->require_subcommand(1); pki->add_subcommand("show")->callback([&] { rc =
//   opcuad::pki_show(settings(), std::cout, std::cerr); }); pki->add_subcommand("list")->callback([&] { rc =
//   opcuad::pki_list(settings(), std::cout, std::cerr); }); auto* trust = pki->add_subcommand("trust");
//   trust->add_option("certificate", arg)->required(); trust->callback([&] { rc =
//   opcuad::pki_trust(settings(), arg, std::cout, std::cerr); }); (reject THUMBPRINT and regenerate the same
//   way.)
//
// Output: one line per certificate (or per action) on `out`, as space-separated key=value pairs; a value
// with spaces, quotes or '=' is in double quotes with \" and \\ escaped. Keys: store (own, trusted,
// issuers, rejected, user_trusted, user_issuers, and *_crl for CRLs), thumbprint (SHA-1, 40 lower-case hex
// digits), subject, issuer, application_uri, dns_names, ip_addresses (comma-separated), not_before,
// not_after (ISO 8601 UTC), key_bits, file; actions print action=trusted|rejected|regenerated. Errors go
// to `err` as one line "opcuad pki: <message>".
//
// Exit codes: 0 done (also when there was nothing to change: trusting a trusted certificate);
// 1 runtime failure (no such certificate, unreadable file, a folder that cannot be written);
// 2 usage (an empty argument, or reject given something that is not a thumbprint).

#include <ostream>
#include <string_view>

#include "transport/security/pki.hpp"

namespace opcuad {

inline constexpr int kPkiExitOk = 0;
inline constexpr int kPkiExitFailure = 1;
inline constexpr int kPkiExitUsage = 2;

// The own certificate: subject, SAN URI / DNS / IP, validity, thumbprint, key size. Creates nothing.
int pki_show(const security::PkiSettings& settings, std::ostream& out, std::ostream& err);
// Every certificate of trusted/, issuers/, rejected/ and user/, and every CRL.
int pki_list(const security::PkiSettings& settings, std::ostream& out, std::ostream& err);
// A certificate file (DER or PEM; copied as DER to trusted/certs/<thumbprint>.der) or the thumbprint of
// a certificate in rejected/certs (moved to trusted/certs).
int pki_trust(const security::PkiSettings& settings, std::string_view file_or_thumbprint, std::ostream& out,
              std::ostream& err);
// Moves a certificate of trusted/certs, named by its thumbprint, to rejected/certs.
int pki_reject(const security::PkiSettings& settings, std::string_view thumbprint, std::ostream& out,
               std::ostream& err);
// A new own certificate and key; the old ones are moved to own/certs/old/ and own/private/old/ with the
// time of the change in their names. The daemon uses the new one from its next start.
int pki_regenerate(const security::PkiSettings& settings, std::ostream& out, std::ostream& err);

}  // namespace opcuad
