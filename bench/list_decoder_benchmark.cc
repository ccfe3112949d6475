// List decoding speed: a PodList of 10,000 and 50,000 realistic pods
// (test/api/testdata/pod.json, ~4.6 KB minified with managedFields, which
// are stripped at parse as a cache's client does; items without kind and
// apiVersion, as kube-apiserver sends them) decoded
//   * BM_ListDecoder: single-threaded (ListDecoder), fed in 64 KiB chunks;
//   * BM_ListDecoderSax: the alternative design, RapidJSON's SAX reader
//     forwarding each item's events into a reusable Document, then
//     Object::FromValue (single-threaded, from one buffer);
//   * BM_ReadList: pipelined (ReadList: a thread reads and frames, the
//     caller and /N more threads parse), from an in-memory body in 64 KiB
//     reads;
//   * BM_ListEachLoopback: RestClient::ListEach over HTTP on loopback from a
//     small server of this program's own that sends the body as one answer.
// Results in docs/benchmarks.md ("List decoding").
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/object.h"
#include "apiserver/endpoints/http_server.h"
#include "base/context.h"
#include "benchmark/benchmark.h"
#include "rapidjson/document.h"
#include "rapidjson/reader.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/client/list_decoder.h"
#include "runtime/client/list_reader.h"
#include "runtime/client/rest_client.h"

namespace kcr::client {
namespace {

constexpr size_t kChunk = 64 << 10;

// The pod fixture, minified, without kind and apiVersion.
const std::string& PodItem() {
  static const std::string* const kJson = [] {
    std::ifstream in("test/api/testdata/pod.json", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    rapidjson::Document doc;
    doc.Parse(text.c_str(), text.size());
    if (doc.HasParseError() || !doc.IsObject()) {
      std::fprintf(stderr, "cannot read test/api/testdata/pod.json\n");
      std::abort();
    }
    doc.RemoveMember("kind");
    doc.RemoveMember("apiVersion");
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    doc.Accept(writer);
    return new std::string(buffer.GetString(), buffer.GetSize());
  }();
  return *kJson;
}

// A PodList body of `n` pods with distinct names.
const std::string& ListBody(int n) {
  static std::string* bodies[2] = {nullptr, nullptr};
  std::string*& body = bodies[n > 10000 ? 1 : 0];
  if (body == nullptr) {
    const std::string& pod = PodItem();
    const std::string name = R"("name":"web-frontend-7c5ddbdf54-x2k9q")";
    const size_t at = pod.find(name);
    body = new std::string(
        R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"48213577"},"items":[)");
    body->reserve(static_cast<size_t>(n) * (pod.size() + 8));
    for (int i = 0; i < n; ++i) {
      if (i > 0) body->push_back(',');
      body->append(pod, 0, at);
      absl::StrAppend(body, R"("name":"web-)", i, R"(")");
      body->append(pod, at + name.size());
    }
    body->append("]}");
  }
  return *body;
}

ListDecoderOptions Options() {
  ListDecoderOptions options;
  options.parse_options.strip_managed_fields = true;
  return options;
}

void Report(benchmark::State& state, int n, const std::string& body) {
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(body.size()));
  state.counters["body_MB"] = static_cast<double>(body.size()) / 1e6;
}

void BM_ListDecoder(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string& body = ListBody(n);
  for (auto _ : state) {
    int64_t items = 0;
    ListDecoder decoder(Options(), [&items](api::ObjectPtr item) {
      benchmark::DoNotOptimize(item);
      ++items;
      return absl::OkStatus();
    });
    for (size_t i = 0; i < body.size(); i += kChunk) {
      if (!decoder.Feed(std::string_view(body).substr(i, kChunk)).ok()) {
        state.SkipWithError("decode failed");
      }
    }
    if (!decoder.Finish().ok() || items != n) state.SkipWithError("finish");
  }
  Report(state, n, body);
}
BENCHMARK(BM_ListDecoder)
    ->Arg(10000)
    ->Arg(50000)
    ->Unit(benchmark::kMillisecond);

// Framing alone: the share of the decoder that the reading thread runs.
// range(1): 1 the AVX2 block scan (where the CPU has it), 0 the portable
// one.
void BM_ListFramer(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const bool avx2 = state.range(1) != 0;
  const std::string& body = ListBody(n);
  for (auto _ : state) {
    ListFramer framer;
    framer.set_avx2_block_scan(avx2);
    FramedItems batch;
    size_t items = 0;
    for (size_t i = 0; i < body.size(); i += kChunk) {
      if (!framer.Feed(std::string_view(body).substr(i, kChunk), &batch).ok()) {
        state.SkipWithError("framing failed");
      }
      items += batch.items.size();
      batch.Clear();
    }
    if (!framer.Finish(&batch).ok() || items != static_cast<size_t>(n)) {
      state.SkipWithError("finish");
    }
  }
  Report(state, n, body);
}
BENCHMARK(BM_ListFramer)
    ->Args({10000, 0})
    ->Args({10000, 1})
    ->Unit(benchmark::kMillisecond);

// The reading thread's whole share as ReadList runs it: each 64 KiB read
// (a memcpy here, the socket's copy there) and its framing. range(1): 0
// reads into one buffer and frames with Feed, which copies each item into
// the batch; 1 reads into the batch itself and frames with FeedInPlace,
// handing a batch over at 256 KiB (its unfinished item carried over).
void BM_ListReading(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const bool in_place = state.range(1) != 0;
  const std::string& body = ListBody(n);
  constexpr size_t kBatch = 256 << 10;
  std::vector<char> read_buffer(kChunk);
  for (auto _ : state) {
    ListFramer framer;
    FramedItems batch;
    FramedItems carry;
    size_t items = 0;
    for (size_t i = 0; i < body.size(); i += kChunk) {
      const size_t len = std::min(kChunk, body.size() - i);
      absl::Status status;
      if (in_place) {
        const size_t from = batch.bytes.size();
        std::memcpy(batch.bytes.Extend(len), body.data() + i, len);
        status = framer.FeedInPlace(&batch, from);
      } else {
        std::memcpy(read_buffer.data(), body.data() + i, len);
        status = framer.Feed(std::string_view(read_buffer.data(), len), &batch);
      }
      if (!status.ok()) state.SkipWithError("framing failed");
      if (batch.bytes.size() + kChunk > kBatch) {
        items += batch.items.size();
        framer.CarryOver(&batch, &carry);
        batch.Clear();
        framer.CarryOver(&carry, &batch);
      }
    }
    if (!framer.Finish(&batch).ok()) state.SkipWithError("finish");
    items += batch.items.size();
    if (items != static_cast<size_t>(n)) state.SkipWithError("items");
  }
  Report(state, n, body);
}
BENCHMARK(BM_ListReading)
    ->Args({10000, 0})
    ->Args({10000, 1})
    ->Unit(benchmark::kMillisecond);

// Object::Parse of the same item, whole, as the floor of any design.
void BM_ObjectParse(benchmark::State& state) {
  const std::string pod =
      absl::StrCat(R"({"kind":"Pod","apiVersion":"v1",)", PodItem().substr(1));
  for (auto _ : state) {
    auto object = api::Object::Parse(pod, Options().parse_options);
    benchmark::DoNotOptimize(object);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(pod.size()));
}
BENCHMARK(BM_ObjectParse);

// SAX events of the items (depth 3 and below) into a reusable Document.
class ItemForwarder
    : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, ItemForwarder> {
 public:
  explicit ItemForwarder(int64_t* items) : items_(items) {}

  bool Default() { return true; }
  bool Null() { return depth_ < 3 || doc_.Null(); }
  bool Bool(bool b) { return depth_ < 3 || doc_.Bool(b); }
  bool Int(int i) { return depth_ < 3 || doc_.Int(i); }
  bool Uint(unsigned u) { return depth_ < 3 || doc_.Uint(u); }
  bool Int64(int64_t i) { return depth_ < 3 || doc_.Int64(i); }
  bool Uint64(uint64_t u) { return depth_ < 3 || doc_.Uint64(u); }
  bool Double(double d) { return depth_ < 3 || doc_.Double(d); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return depth_ < 3 || doc_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    return depth_ < 3 || doc_.Key(s, n, copy);
  }
  bool StartObject() { return ++depth_ < 3 || doc_.StartObject(); }
  bool EndObject(rapidjson::SizeType members) {
    if (depth_-- < 3) return true;
    if (!doc_.EndObject(members)) return false;
    if (depth_ == 2) return Item();
    return true;
  }
  bool StartArray() { return ++depth_ < 3 || doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType elements) {
    return depth_-- < 3 || doc_.EndArray(elements);
  }

 private:
  bool Item() {
    // Moves the finished item from the Document's stack to its root.
    auto done = [](rapidjson::Document&) { return true; };
    doc_.Populate(done);
    auto& alloc = doc_.GetAllocator();
    doc_.AddMember("kind", "Pod", alloc);
    doc_.AddMember("apiVersion", "v1", alloc);
    auto object = api::Object::FromValue(doc_, Options().parse_options);
    if (!object.ok()) return false;
    benchmark::DoNotOptimize(*object);
    ++*items_;
    doc_.SetNull();
    alloc.Clear();
    return true;
  }

  rapidjson::Document doc_;
  int depth_ = 0;
  int64_t* items_;
};

void BM_ListDecoderSax(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string& body = ListBody(n);
  for (auto _ : state) {
    int64_t items = 0;
    ItemForwarder forwarder(&items);
    rapidjson::Reader reader;
    rapidjson::StringStream in(body.c_str());
    if (!reader.Parse<rapidjson::kParseIterativeFlag>(in, forwarder) ||
        items != n) {
      state.SkipWithError("SAX decode failed");
    }
  }
  Report(state, n, body);
}
BENCHMARK(BM_ListDecoderSax)
    ->Arg(10000)
    ->Arg(50000)
    ->Unit(benchmark::kMillisecond);

// A body in memory, read 64 KiB at a time.
class StringBodyReader final : public BodyReader {
 public:
  explicit StringBodyReader(const std::string& body) : body_(body) {}
  absl::StatusOr<size_t> Read(char* data, size_t size) override {
    const size_t n = std::min(size, body_.size() - at_);
    body_.copy(data, n, at_);
    at_ += n;
    return n;
  }
  void Cancel() override {}

 private:
  const std::string& body_;
  size_t at_ = 0;
};

void BM_ReadList(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string& body = ListBody(n);
  ListReaderOptions options;
  options.decoder = Options();
  options.parse_threads = static_cast<int>(state.range(1));
  for (auto _ : state) {
    StringBodyReader reader(body);
    int64_t items = 0;
    auto meta = ReadList(Context::Background(), reader, options,
                         [&items](api::ObjectPtr item) {
                           benchmark::DoNotOptimize(item);
                           ++items;
                           return absl::OkStatus();
                         });
    if (!meta.ok() || items != n) state.SkipWithError("ReadList failed");
  }
  Report(state, n, body);
}
BENCHMARK(BM_ReadList)
    ->Args({10000, 0})
    ->Args({10000, 1})
    ->Args({50000, 0})
    ->Args({50000, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_ListEachLoopback(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string& body = ListBody(n);
  apiserver::HttpServer server(
      apiserver::HttpServerOptions(),
      [&body](const apiserver::HttpRequest&, apiserver::HttpExchange* ex) {
        apiserver::HttpResponse response;
        response.status = 200;
        response.body = body;
        ex->Respond(std::move(response));
      });
  if (!server.Start().ok()) {
    state.SkipWithError("cannot start the server");
    return;
  }
  Config config;
  config.host = absl::StrCat("http://127.0.0.1:", server.port());
  config.qps = -1;
  ClientOptions options;
  options.parse_options.strip_managed_fields = true;
  auto client = NewRestClient(config, options);
  if (!client.ok()) {
    state.SkipWithError("cannot make a client");
    return;
  }
  const Resource pods =
      Resource::Namespaced(api::GroupVersionResource{"", "v1", "pods"});
  for (auto _ : state) {
    int64_t items = 0;
    auto meta = (*client)->ListEach(Context::Background(), pods, {},
                                    [&items](api::ObjectPtr item) {
                                      benchmark::DoNotOptimize(item);
                                      ++items;
                                      return absl::OkStatus();
                                    });
    if (!meta.ok() || items != n) state.SkipWithError("ListEach failed");
  }
  Report(state, n, body);
}
BENCHMARK(BM_ListEachLoopback)
    ->Arg(10000)
    ->Arg(50000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace kcr::client

BENCHMARK_MAIN();
