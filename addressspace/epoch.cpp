#include "addressspace/epoch.hpp"

#include <algorithm>

namespace opcuad::addressspace {

EpochReclaimer::EpochReclaimer(size_t max_participants) {
  participants_.reserve(max_participants);
  for (size_t i = 0; i < max_participants; ++i) participants_.push_back(std::make_unique<Participant>());
}

EpochReclaimer::~EpochReclaimer() {
  for (auto& p : participants_) {
    for (auto& r : p->retired_) r.deleter(r.object);
  }
}

EpochReclaimer::Participant* EpochReclaimer::register_participant(bool hurried) {
  // Slots exist from construction and start offline, so a slot claimed here but not yet online never
  // holds the epoch back.
  const size_t i = registered_.fetch_add(1, std::memory_order_seq_cst);
  if (i >= participants_.size()) return nullptr;
  Participant* p = participants_[i].get();
  p->hurried_ = hurried;
  p->local_epoch_.store(global_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
  return p;
}

void EpochReclaimer::try_advance() noexcept {
  uint64_t g = global_.load(std::memory_order_seq_cst);
  const size_t n = std::min(registered_.load(std::memory_order_seq_cst), participants_.size());
  for (size_t i = 0; i < n; ++i) {
    const uint64_t local = participants_[i]->local_epoch_.load(std::memory_order_seq_cst);
    if (local != kOffline && local != g) return;
  }
  global_.compare_exchange_strong(g, g + 1, std::memory_order_seq_cst);
}

void EpochReclaimer::collect(Participant& p) noexcept {
  if (p.retired_.empty()) return;
  const uint64_t g = global_.load(std::memory_order_seq_cst);
  size_t kept = 0;
  for (size_t i = 0; i < p.retired_.size(); ++i) {
    auto& r = p.retired_[i];
    if (r.epoch + 2 <= g) {
      r.deleter(r.object);
    } else {
      p.retired_[kept++] = r;
    }
  }
  p.retired_.resize(kept);
  if (kept == 0 && p.hurried_) waiting_.fetch_sub(1, std::memory_order_relaxed);
}

void EpochReclaimer::quiescent(Participant& p) noexcept {
  p.local_epoch_.store(global_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
  try_advance();
  collect(p);
}

void EpochReclaimer::go_offline(Participant& p) noexcept {
  p.local_epoch_.store(kOffline, std::memory_order_seq_cst);
  try_advance();
  collect(p);
}

void EpochReclaimer::go_online(Participant& p) noexcept {
  p.local_epoch_.store(global_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
}

void EpochReclaimer::retire(Participant& p, void* object, void (*deleter)(void*) noexcept) {
  if (p.retired_.empty() && p.hurried_) waiting_.fetch_add(1, std::memory_order_relaxed);
  p.retired_.push_back({object, deleter, global_.load(std::memory_order_seq_cst)});
}

}  // namespace opcuad::addressspace
