#include "libplan/util/hash.h"

#include <openssl/evp.h>

#include <cassert>

namespace zp {

Digest sha256(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.finish();
}

std::string toHex(const Digest& d) {
  static const char* kHex = "0123456789abcdef";
  std::string out(64, '0');
  for (size_t i = 0; i < d.size(); ++i) {
    out[2 * i] = kHex[d[i] >> 4];
    out[2 * i + 1] = kHex[d[i] & 15];
  }
  return out;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  [[maybe_unused]] int ok = EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
  assert(ok == 1);
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}

void Sha256::updateField(std::string_view bytes) {
  uint64_t n = bytes.size();
  update(std::string_view(reinterpret_cast<const char*>(&n), sizeof n));
  update(bytes);
}

Digest Sha256::finish() {
  Digest d{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), d.data(), &len);
  assert(len == d.size());
  return d;
}

}  // namespace zp
