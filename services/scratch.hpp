#pragma once
// Per-shard scratch: the requests, responses and work lists that handlers reuse so that a warm request
// allocates nothing (docs/ARCHITECTURE.md, "allocation-free request path"). ShardState owns one
// `Scratch`; only that shard's thread touches it.
//
// Each object is taken through a Lease for the length of one request. If a handler were ever re-entered
// while its object is leased, the inner call gets a fresh private object instead of corrupting the outer
// one. When a lease ends, an object that one large request made grow beyond its normal size is replaced
// by a fresh one, so a single hostile request does not pin its peak memory on the shard for ever.

#include <cstdint>
#include <memory>
#include <vector>

#include "addressspace/node_store.hpp"
#include "ua/buffer.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::services {

template <class T>
class Reusable {
 public:
  // `oversized(value)` says whether the object grew past what it keeps between requests.
  using Oversized = bool (*)(const T&) noexcept;
  explicit Reusable(Oversized oversized) noexcept : oversized_(oversized) {}
  Reusable(const Reusable&) = delete;
  Reusable& operator=(const Reusable&) = delete;

  class Lease {
   public:
    T& operator*() const noexcept { return *value_; }
    T* operator->() const noexcept { return value_; }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (!owner_) return;
      if (owner_->oversized_(*value_)) *value_ = T{};
      owner_->leased_ = false;
    }

   private:
    friend class Reusable;
    explicit Lease(Reusable& owner) noexcept : owner_(&owner), value_(&owner.value_) {}
    explicit Lease(std::unique_ptr<T> own) noexcept : own_(std::move(own)), value_(own_.get()) {}
    Reusable* owner_ = nullptr;
    std::unique_ptr<T> own_;
    T* value_;
  };

  Lease lease() {
    if (leased_) return Lease(std::make_unique<T>());
    leased_ = true;
    return Lease(*this);
  }
  bool leased() const noexcept { return leased_; }

 private:
  T value_{};
  Oversized oversized_;
  bool leased_ = false;
};

// What Browse and BrowseNext answer, before encoding: each BrowseResult's status and continuation
// point, and its references as a range of a shared list. The response is encoded from this straight out
// of the NodeStore (names and texts as views into its string pool), so a Browse in steady state copies
// no string and allocates nothing.
struct BrowseOutcome {
  ua::StatusCode status;
  ua::ByteString continuation_point;
  uint32_t result_mask = 0;
  uint32_t begin = 0;  // [begin, end) of BrowseScratch::references
  uint32_t end = 0;
};
struct BrowseScratch {
  std::vector<const addressspace::Reference*> references;
  std::vector<BrowseOutcome> results;

  void reset(size_t n) {
    references.clear();
    results.clear();
    results.resize(n);
  }
};

// TranslateBrowsePathsToNodeIds: the node sets of one path step, and a visit mark per node of the store
// (a node is in `next` when mark[node] == generation), so a step keeps each node once in O(1).
struct TranslateScratch {
  std::vector<addressspace::NodeIndex> current;
  std::vector<addressspace::NodeIndex> next;
  std::vector<uint32_t> mark;
  uint32_t generation = 0;

  // Starts a new step over a store of `nodes` nodes.
  void next_step(size_t nodes) {
    if (mark.size() < nodes) mark.resize(nodes, 0);
    if (++generation == 0) {  // wrapped: forget every old mark
      std::fill(mark.begin(), mark.end(), 0);
      generation = 1;
    }
    next.clear();
  }
  // Adds `n` to `next` unless it is there already; false when it was.
  bool add(addressspace::NodeIndex n) {
    if (mark[n] == generation) return false;
    mark[n] = generation;
    next.push_back(n);
    return true;
  }
};

// Sizes past which a scratch object is dropped after its request (elements, not bytes): a little above
// what the default operation limits make common, so ordinary traffic never reallocates.
inline constexpr size_t kScratchKeepOperations = 1024;
inline constexpr size_t kScratchKeepReferences = 1u << 16;
inline constexpr size_t kScratchKeepBytes = 1u << 16;  // of a byte buffer

struct Scratch {
  // Write: a written structure's body transcoded by its codec (addressspace::check_structures).
  ua::ByteBuffer structure_body;
  Reusable<ua::ReadRequest> read_request{
      [](const ua::ReadRequest& r) noexcept { return r.nodes_to_read.capacity() > kScratchKeepOperations; }};
  Reusable<ua::ReadResponse> read_response{
      [](const ua::ReadResponse& r) noexcept { return r.results.capacity() > kScratchKeepOperations; }};
  Reusable<ua::WriteRequest> write_request{[](const ua::WriteRequest& r) noexcept {
    return r.nodes_to_write.capacity() > kScratchKeepOperations;
  }};
  Reusable<ua::WriteResponse> write_response{
      [](const ua::WriteResponse& r) noexcept { return r.results.capacity() > kScratchKeepOperations; }};
  Reusable<std::vector<const addressspace::ValueCell*>> written_cells{
      [](const std::vector<const addressspace::ValueCell*>& v) noexcept {
        return v.capacity() > kScratchKeepOperations;
      }};
  Reusable<ua::BrowseRequest> browse_request{[](const ua::BrowseRequest& r) noexcept {
    return r.nodes_to_browse.capacity() > kScratchKeepOperations;
  }};
  Reusable<ua::BrowseNextRequest> browse_next_request{[](const ua::BrowseNextRequest& r) noexcept {
    return r.continuation_points.capacity() > kScratchKeepOperations;
  }};
  Reusable<BrowseScratch> browse{[](const BrowseScratch& b) noexcept {
    return b.references.capacity() > kScratchKeepReferences || b.results.capacity() > kScratchKeepOperations;
  }};
  Reusable<TranslateScratch> translate{[](const TranslateScratch& t) noexcept {
    return t.current.capacity() > kScratchKeepReferences || t.next.capacity() > kScratchKeepReferences;
  }};
};

}  // namespace opcuad::services
