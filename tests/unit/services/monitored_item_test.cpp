// MonitoredItem's notification encoding: an inline scalar is written without a Variant (one append of the
// bytes Part 6 §5.2.2.16-17 lay down), a boxed value through the codec; both must decode to the same
// MonitoredItemNotification a generated encoder would write, with TimestampsToReturn applied.
#include <catch2/catch.hpp>

#include "services/monitored_item.hpp"
#include "ua/codec.hpp"

using namespace opcuad;

namespace {

ua::MonitoredItemNotification encode_and_decode(services::MonitoredItem& item) {
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  item.encode_oldest(e);
  REQUIRE(e.status().is_good());
  ua::Decoder d(buf.span());
  ua::MonitoredItemNotification n;
  ua::decode(d, n);
  REQUIRE(d.ok());
  CHECK(d.remaining() == 0);
  return n;
}

}  // namespace

TEST_CASE("monitored item: every inline scalar kind encodes as the codec does",
          "[services][monitored_item][publish]") {
  using T = ua::TimestampsToReturn;
  const std::vector<ua::Variant> values = {
      ua::Variant(),
      ua::Variant(true),
      ua::Variant(int8_t{-5}),
      ua::Variant(uint8_t{250}),
      ua::Variant(int16_t{-30000}),
      ua::Variant(uint16_t{65000}),
      ua::Variant(int32_t{-2000000000}),
      ua::Variant(uint32_t{4000000000u}),
      ua::Variant(int64_t{-9000000000000000000}),
      ua::Variant(uint64_t{18000000000000000000u}),
      ua::Variant(1.5f),
      ua::Variant(-2.25),
      ua::Variant(ua::DateTime{132000000000000000}),
      ua::Variant(ua::StatusCode(0x80340000u)),
      ua::Variant(ua::String("boxed")),         // not inline: the codec path
      ua::Variant(std::vector<int32_t>{1, 2}),  // not inline either
  };
  for (T ts : {T::Source, T::Server, T::Both, T::Neither}) {
    for (uint32_t status : {0u, 0x00A00000u}) {
      for (const ua::Variant& value : values) {
        services::MonitoredItem item;
        item.client_handle = 4242;
        item.set_timestamps(ts);
        ua::DataValue dv;
        dv.value = value;
        dv.status = ua::StatusCode(status);
        dv.source_timestamp = ua::DateTime{132000000000000001};
        dv.server_timestamp = ua::DateTime{132000000000000002};
        item.enqueue(dv);
        const ua::MonitoredItemNotification n = encode_and_decode(item);
        INFO("type " << static_cast<int>(value.type()) << ", timestamps " << static_cast<int>(ts));
        CHECK(n.client_handle == 4242);
        CHECK(n.value.value == value);
        CHECK(n.value.status == ua::StatusCode(status));
        const bool source = ts == T::Source || ts == T::Both;
        const bool server = ts == T::Server || ts == T::Both;
        CHECK(n.value.source_timestamp.ticks == (source ? dv.source_timestamp.ticks : 0));
        CHECK(n.value.server_timestamp.ticks == (server ? dv.server_timestamp.ticks : 0));
      }
    }
  }
}
