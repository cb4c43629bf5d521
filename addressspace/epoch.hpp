#pragma once
// EpochReclaimer: quiescent-state-based reclamation for objects that readers reach without locks (a
// replaced NodeStore, the boxed value a value cell pointed to before a write).
//
// Every thread that reads shared pointers is a Participant and calls quiescent() once per loop turn, at
// a point where it holds no pointer obtained earlier. An object unlinked and retired while the global
// epoch was e is freed once the global epoch reaches e + 2: the epoch only advances when every online
// participant has announced the current one, so by e + 2 each has passed a quiescent point after the
// unlink. Retired objects are kept per participant (no lock); they are freed in that participant's own
// quiescent() calls. Offline participants (a control thread between its timers) do not hold the epoch
// back, so a thread that reads shared pointers only now and then stays offline between its turns
// (OnlineScope) instead of holding every retired object until its next quiescent point.
//
// waiting() counts the participants registered as `hurried` whose retired list is not empty: while it is
// not zero, every participant that stays online should pass its quiescent points often (the shards
// shorten their period, docs/ARCHITECTURE.md), because the grace period is as long as the slowest
// participant's period. A participant that frees its retired objects only now and then (a control thread
// once a second) gains nothing from that and is not counted.
//
// Threads: register_participant() may be called from any thread; quiescent(), retire(), go_online() and
// go_offline() only by the participant's own thread.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace opcuad::addressspace {

class EpochReclaimer {
 public:
  class Participant {
   public:
    uint64_t retired_count() const noexcept { return retired_.size(); }

   private:
    friend class EpochReclaimer;
    struct Retired {
      void* object;
      void (*deleter)(void*) noexcept;
      uint64_t epoch;
    };
    alignas(64) std::atomic<uint64_t> local_epoch_{kOffline};
    std::vector<Retired> retired_;  // owned by the participant's thread
    bool hurried_ = false;
  };

  // Online for its lifetime, offline again at its end unless the participant was already online (so
  // scopes nest). The participant's own thread only.
  class OnlineScope {
   public:
    OnlineScope(EpochReclaimer& reclaimer, Participant& p) noexcept
        : reclaimer_(reclaimer), p_(p), was_online_(reclaimer.online(p)) {
      if (!was_online_) reclaimer_.go_online(p_);
    }
    ~OnlineScope() {
      if (!was_online_) reclaimer_.go_offline(p_);
    }
    OnlineScope(const OnlineScope&) = delete;
    OnlineScope& operator=(const OnlineScope&) = delete;

   private:
    EpochReclaimer& reclaimer_;
    Participant& p_;
    bool was_online_;
  };
  static constexpr uint64_t kOffline = ~uint64_t{0};

  explicit EpochReclaimer(size_t max_participants);
  ~EpochReclaimer();  // frees everything still retired; REQUIRES: no reader is running
  EpochReclaimer(const EpochReclaimer&) = delete;
  EpochReclaimer& operator=(const EpochReclaimer&) = delete;

  // A new participant, online. Returns nullptr when max_participants are registered.
  Participant* register_participant(bool hurried = false);

  void quiescent(Participant& p) noexcept;
  void go_offline(Participant& p) noexcept;
  void go_online(Participant& p) noexcept;
  // The participant's own thread only.
  bool online(const Participant& p) const noexcept {
    return p.local_epoch_.load(std::memory_order_relaxed) != kOffline;
  }
  // Participants with retired objects not yet freed (any thread; a hint, not a synchronisation point).
  uint32_t waiting() const noexcept { return waiting_.load(std::memory_order_relaxed); }

  // Frees `object` with `deleter` once no reader can hold it. REQUIRES: already unlinked.
  void retire(Participant& p, void* object, void (*deleter)(void*) noexcept);
  template <class T>
  void retire(Participant& p, const T* object) {
    retire(p, const_cast<T*>(object), [](void* o) noexcept { delete static_cast<T*>(o); });
  }

  uint64_t epoch() const noexcept { return global_.load(std::memory_order_seq_cst); }

 private:
  void try_advance() noexcept;
  void collect(Participant& p) noexcept;

  alignas(64) std::atomic<uint64_t> global_{1};
  alignas(64) std::atomic<uint32_t> waiting_{0};
  std::vector<std::unique_ptr<Participant>> participants_;
  std::atomic<size_t> registered_{0};
};

}  // namespace opcuad::addressspace
