// The ranges phaze accepts for the integers it reads (model dimensions, batches, cluster and
// architecture sizes). Each keeps every quantity derived from it representable in 64 bits — a
// product of dimensions, an element or FLOP count, a byte count — so that an input outside them
// is refused where it is read, with its location, instead of wrapping to nonsense. Documented in
// share/config/README.md ("Limits") and workloads/README.md. The bounds are far above any real
// workload or machine.
#pragma once

#include <cstdint>

namespace phaze::limits {

// Model dimensions (workload files; phaze graph --sequence-length).
inline constexpr std::int64_t kLayers = std::int64_t{1} << 16;         // 65,536
inline constexpr std::int64_t kHidden = std::int64_t{1} << 20;         // 1,048,576
inline constexpr std::int64_t kHeads = std::int64_t{1} << 16;
inline constexpr std::int64_t kFfnHidden = std::int64_t{1} << 22;      // 4,194,304
inline constexpr std::int64_t kVocab = std::int64_t{1} << 24;          // 16,777,216
inline constexpr std::int64_t kSequence = std::int64_t{1} << 24;       // tokens per sample
inline constexpr std::int64_t kExperts = std::int64_t{1} << 16;
inline constexpr std::int64_t kDtypeBytes = 16;
// Training and cluster.
inline constexpr std::int64_t kMicroBatch = std::int64_t{1} << 20;
inline constexpr std::int64_t kGlobalBatch = std::int64_t{1} << 40;
inline constexpr std::int64_t kAccelerators = std::int64_t{1} << 24;   // 16,777,216
inline constexpr std::int64_t kWidth = std::int64_t{1} << 16;          // t, p, v of a plan
// Architecture.
inline constexpr std::int64_t kCores = std::int64_t{1} << 16;          // num_tc, num_vc
inline constexpr std::int64_t kPeDim = std::int64_t{1} << 14;          // pe_x, pe_y, pe_vc
inline constexpr std::int64_t kMemoryBytes = std::int64_t{1} << 50;    // GLB, L2, HBM: 1 PiB
// Input files and documents: a text file phaze reads (run config, model, graph, DAG, layer
// table, architecture, space, op list), and the nodes a YAML/JSON document may expand to once its
// aliases are followed (a "billion laughs" document of a few lines expands to 10^9).
inline constexpr std::int64_t kInputFileBytes = std::int64_t{64} << 20;  // 64 MiB
inline constexpr std::int64_t kDocumentNodes = std::int64_t{4} << 20;    // 4,194,304
inline constexpr int kDocumentDepth = 256;                                // nested maps/sequences
// Candidates of an architecture space (the product of its value counts): each one's area is
// computed before the window and the sort, about 4 µs each (the paper's space: 75,712).
inline constexpr std::int64_t kSpaceCandidates = std::int64_t{1} << 22;  // 4,194,304
// Layers of one width in a layer table (phaze place): the placement DP's stage table grows as
// layers² × stages, about 3 s at 1,000 layers and cubic beyond.
inline constexpr std::int64_t kPlacementLayers = 2048;
// What one workload may count (FLOPs of a training step of one micro-batch, parameter bytes with
// optimizer state): 2^62, a quarter of int64's range, leaving room for the sums built on it.
inline constexpr double kCount = 4611686018427387904.0;
// A duration read from a file (a DAG op's latency): 1e9 s, about 32 years, so that sums over
// every op of a schedule stay finite and printable.
inline constexpr double kDurationSeconds = 1e9;
// The smallest rate an architecture may give (HBM bytes/s, GLB words/cycle, clock Hz): 1, so a
// time derived from it (at most kCount / 1) stays finite.
inline constexpr double kMinRate = 1.0;
// The smallest link bandwidth (bytes/s) a system file, a run config or a layer table may give:
// 1e-3, so 2^62 bytes over it (4.6e21 s) and sums of such stay finite. Lower than kMinRate because
// layer tables may be written in scaled units (tests/data/placement-golden.json uses 0.5–4).
inline constexpr double kMinLinkRate = 1e-3;

}  // namespace phaze::limits
