#include "daemon/pki_command.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "transport/security/certificate.hpp"

namespace opcuad {

namespace {

namespace fs = std::filesystem;
using security::PkiPaths;

// A key=value value: bare, or in double quotes when it is empty or has spaces, quotes, = or backslashes.
// (Not named quoted: ADL would pick std::quoted for std::string arguments.)
std::string kv_value(std::string_view v) {
  const bool plain = !v.empty() && v.find_first_of(" \"=\\\t") == std::string_view::npos;
  if (plain) return std::string(v);
  std::string s = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') s.push_back('\\');
    s.push_back(c);
  }
  s.push_back('"');
  return s;
}

std::string joined(const std::vector<std::string>& list) {
  std::string s;
  for (const auto& item : list) s += (s.empty() ? "" : ",") + item;
  return s;
}

void print_certificate(std::ostream& out, std::string_view store, X509* cert, const fs::path& file) {
  const security::CertificateInfo i = security::describe(cert);
  out << "store=" << store << " thumbprint=" << i.thumbprint_hex << " subject=" << kv_value(i.subject)
      << " issuer=" << kv_value(i.issuer) << " application_uri=" << kv_value(i.application_uri)
      << " dns_names=" << kv_value(joined(i.dns_names))
      << " ip_addresses=" << kv_value(joined(i.ip_addresses))
      << " not_before=" << security::iso_time(i.not_before)
      << " not_after=" << security::iso_time(i.not_after) << " key_bits=" << i.key_bits
      << " file=" << kv_value(file.string()) << "\n";
}

int fail(std::ostream& err, const std::string& message, int code = kPkiExitFailure) {
  err << "opcuad pki: " << message << "\n";
  return code;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file(ec) && !name.starts_with(".") && name.find(".tmp-") == std::string::npos) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string lower(std::string_view s) {
  std::string l(s);
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l;
}

// The file of `dir` holding the certificate with this thumbprint (by content, not by file name).
fs::path find_by_thumbprint(const fs::path& dir, const std::string& thumbprint_hex) {
  for (const auto& f : files_in(dir)) {
    if (security::X509Ptr c = security::read_certificate_file(f)) {
      if (security::to_hex(security::thumbprint(c.get())) == thumbprint_hex) return f;
    }
  }
  return {};
}

std::string utc_stamp() {
  std::string s = security::iso_time(std::chrono::system_clock::now());
  s.erase(std::remove(s.begin(), s.end(), ':'), s.end());  // 20261201T221000Z-ish, safe in file names
  s.erase(std::remove(s.begin(), s.end(), '-'), s.end());
  return s;
}

std::string move_file(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  return ec ? "cannot move " + from.string() + " to " + to.string() + ": " + ec.message() : std::string();
}

}  // namespace

int pki_show(const security::PkiSettings& settings, std::ostream& out, std::ostream& err) {
  const PkiPaths paths(settings.directory, settings.certificate_name);
  std::error_code ec;
  if (!fs::exists(paths.own_certificate, ec)) {
    return fail(err, "no own certificate " + paths.own_certificate.string() +
                         " (the daemon creates it at its first start; or run `opcuad pki regenerate`)");
  }
  security::X509Ptr cert = security::read_certificate_file(paths.own_certificate);
  if (!cert) return fail(err, "cannot read " + paths.own_certificate.string());
  print_certificate(out, "own", cert.get(), paths.own_certificate);
  return kPkiExitOk;
}

int pki_list(const security::PkiSettings& settings, std::ostream& out, std::ostream& err) {
  const PkiPaths p(settings.directory, settings.certificate_name);
  std::error_code ec;
  if (!fs::is_directory(p.root, ec)) return fail(err, "no PKI directory " + p.root.string());
  const std::pair<const char*, const fs::path*> cert_stores[] = {{"trusted", &p.trusted_certs},
                                                                 {"issuers", &p.issuers_certs},
                                                                 {"rejected", &p.rejected_certs},
                                                                 {"user_trusted", &p.user_trusted_certs},
                                                                 {"user_issuers", &p.user_issuers_certs}};
  for (const auto& [store, dir] : cert_stores) {
    for (const auto& f : files_in(*dir)) {
      if (security::X509Ptr c = security::read_certificate_file(f)) {
        print_certificate(out, store, c.get(), f);
      } else {
        out << "store=" << store << " error=" << kv_value("not a certificate")
            << " file=" << kv_value(f.string()) << "\n";
      }
    }
  }
  const std::pair<const char*, const fs::path*> crl_stores[] = {{"trusted_crl", &p.trusted_crl},
                                                                {"issuers_crl", &p.issuers_crl},
                                                                {"user_trusted_crl", &p.user_trusted_crl},
                                                                {"user_issuers_crl", &p.user_issuers_crl}};
  for (const auto& [store, dir] : crl_stores) {
    for (const auto& f : files_in(*dir)) {
      security::X509CrlPtr crl = security::read_crl_file(f);
      if (!crl) {
        out << "store=" << store << " error=" << kv_value("not a CRL") << " file=" << kv_value(f.string())
            << "\n";
        continue;
      }
      const auto next = security::asn1_time(X509_CRL_get0_nextUpdate(crl.get()));
      out << "store=" << store << " issuer=" << kv_value(security::name_text(X509_CRL_get_issuer(crl.get())))
          << " next_update=" << (next ? security::iso_time(*next) : std::string("none"))
          << " revoked=" << sk_X509_REVOKED_num(X509_CRL_get_REVOKED(crl.get()))
          << " file=" << kv_value(f.string()) << "\n";
    }
  }
  return kPkiExitOk;
}

int pki_trust(const security::PkiSettings& settings, std::string_view arg, std::ostream& out,
              std::ostream& err) {
  if (arg.empty())
    return fail(err, "trust needs a certificate file or the thumbprint of a rejected certificate",
                kPkiExitUsage);
  const PkiPaths p(settings.directory, settings.certificate_name);
  if (auto e = security::create_layout(p); !e.empty()) return fail(err, e);
  std::error_code ec;
  if (security::is_thumbprint_hex(arg) && !fs::exists(fs::path(arg), ec)) {
    const std::string thumb = lower(arg);
    const fs::path target = p.trusted_certs / (thumb + ".der");
    const fs::path rejected = find_by_thumbprint(p.rejected_certs, thumb);
    if (rejected.empty()) {
      if (!find_by_thumbprint(p.trusted_certs, thumb).empty()) {
        out << "action=trusted thumbprint=" << thumb << " already=true\n";
        return kPkiExitOk;
      }
      return fail(err, "no certificate with thumbprint " + thumb + " in " + p.rejected_certs.string());
    }
    if (auto e = move_file(rejected, target); !e.empty()) return fail(err, e);
    security::X509Ptr c = security::read_certificate_file(target);
    out << "action=trusted thumbprint=" << thumb
        << " subject=" << kv_value(c ? security::name_text(X509_get_subject_name(c.get())) : "")
        << " file=" << kv_value(target.string()) << "\n";
    return kPkiExitOk;
  }
  const fs::path file(arg);
  security::X509Ptr c = security::read_certificate_file(file);
  if (!c) return fail(err, "cannot read a DER or PEM certificate from " + file.string());
  const std::string thumb = security::to_hex(security::thumbprint(c.get()));
  const fs::path target = p.trusted_certs / (thumb + ".der");
  if (auto e = security::write_file_atomically(target, security::to_der(c.get()), 0640); !e.empty())
    return fail(err, e);
  // Trusted now: the copy among the rejected would only confuse a later `list`.
  if (const fs::path rejected = find_by_thumbprint(p.rejected_certs, thumb); !rejected.empty())
    fs::remove(rejected, ec);
  out << "action=trusted thumbprint=" << thumb
      << " subject=" << kv_value(security::name_text(X509_get_subject_name(c.get())))
      << " file=" << kv_value(target.string()) << "\n";
  return kPkiExitOk;
}

int pki_reject(const security::PkiSettings& settings, std::string_view arg, std::ostream& out,
               std::ostream& err) {
  if (!security::is_thumbprint_hex(arg)) {
    return fail(err, "reject needs the SHA-1 thumbprint (40 hex digits) of a trusted certificate",
                kPkiExitUsage);
  }
  const PkiPaths p(settings.directory, settings.certificate_name);
  const std::string thumb = lower(arg);
  const fs::path trusted = find_by_thumbprint(p.trusted_certs, thumb);
  if (trusted.empty())
    return fail(err, "no certificate with thumbprint " + thumb + " in " + p.trusted_certs.string());
  if (auto e = security::create_layout(p); !e.empty()) return fail(err, e);
  const fs::path target = p.rejected_certs / (thumb + ".der");
  if (auto e = move_file(trusted, target); !e.empty()) return fail(err, e);
  out << "action=rejected thumbprint=" << thumb << " file=" << kv_value(target.string()) << "\n";
  return kPkiExitOk;
}

int pki_regenerate(const security::PkiSettings& settings, std::ostream& out, std::ostream& err) {
  const PkiPaths p(settings.directory, settings.certificate_name);
  if (auto e = security::create_layout(p); !e.empty()) return fail(err, e);
  const std::string stamp = utc_stamp();
  std::error_code ec;
  std::string old_cert, old_key;
  for (const auto& [file, dir, moved] : {std::tuple{&p.own_certificate, p.own_certs / "old", &old_cert},
                                         std::tuple{&p.own_key, p.own_private / "old", &old_key}}) {
    if (!fs::exists(*file, ec)) continue;
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return fail(err, "cannot create " + dir.string());
    const fs::path target = dir / (file->stem().string() + "-" + stamp + file->extension().string());
    if (auto e = move_file(*file, target); !e.empty()) return fail(err, e);
    *moved = target.string();
  }
  if (auto e = security::generate_own_certificate(settings, p); !e.empty())
    return fail(err, "cannot create the own certificate: " + e);
  security::X509Ptr c = security::read_certificate_file(p.own_certificate);
  if (!c) return fail(err, "cannot read back " + p.own_certificate.string());
  out << "action=regenerated thumbprint=" << security::to_hex(security::thumbprint(c.get()))
      << " file=" << kv_value(p.own_certificate.string()) << " old_certificate=" << kv_value(old_cert)
      << " old_key=" << kv_value(old_key) << " restart=required\n";
  return kPkiExitOk;
}

}  // namespace opcuad
