#include "model/options_table.h"

namespace delegato::model_internal {

using BO = tflite::BuiltinOptions;
using Op = BuiltinOp;

BO OptionsTypeFor(BuiltinOp op) {
  switch (op) {
    case Op::kConv2d: return BO::Conv2DOptions;
    case Op::kDepthwiseConv2d: return BO::DepthwiseConv2DOptions;
    case Op::kConcatEmbeddings: return BO::ConcatEmbeddingsOptions;
    case Op::kLshProjection: return BO::LSHProjectionOptions;
    case Op::kAveragePool2d:
    case Op::kMaxPool2d:
    case Op::kL2Pool2d: return BO::Pool2DOptions;
    case Op::kSvdf: return BO::SVDFOptions;
    case Op::kRnn: return BO::RNNOptions;
    case Op::kFullyConnected: return BO::FullyConnectedOptions;
    case Op::kSoftmax: return BO::SoftmaxOptions;
    case Op::kConcatenation: return BO::ConcatenationOptions;
    case Op::kAdd: return BO::AddOptions;
    case Op::kL2Normalization: return BO::L2NormOptions;
    case Op::kLocalResponseNormalization: return BO::LocalResponseNormalizationOptions;
    case Op::kLstm: return BO::LSTMOptions;
    case Op::kResizeBilinear: return BO::ResizeBilinearOptions;
    case Op::kCall: return BO::CallOptions;
    case Op::kReshape: return BO::ReshapeOptions;
    case Op::kSkipGram: return BO::SkipGramOptions;
    case Op::kSpaceToDepth: return BO::SpaceToDepthOptions;
    case Op::kEmbeddingLookupSparse: return BO::EmbeddingLookupSparseOptions;
    case Op::kMul: return BO::MulOptions;
    case Op::kPad: return BO::PadOptions;
    case Op::kGather: return BO::GatherOptions;
    case Op::kBatchToSpaceNd: return BO::BatchToSpaceNDOptions;
    case Op::kSpaceToBatchNd: return BO::SpaceToBatchNDOptions;
    case Op::kTranspose: return BO::TransposeOptions;
    case Op::kMean:
    case Op::kSum:
    case Op::kReduceProd:
    case Op::kReduceMax:
    case Op::kReduceMin:
    case Op::kReduceAny:
    case Op::kReduceAll: return BO::ReducerOptions;
    case Op::kSub: return BO::SubOptions;
    case Op::kDiv: return BO::DivOptions;
    case Op::kSqueeze: return BO::SqueezeOptions;
    case Op::kUnidirectionalSequenceRnn: return BO::SequenceRNNOptions;
    case Op::kStridedSlice: return BO::StridedSliceOptions;
    case Op::kExp: return BO::ExpOptions;
    case Op::kTopkV2: return BO::TopKV2Options;
    case Op::kSplit: return BO::SplitOptions;
    case Op::kLogSoftmax: return BO::LogSoftmaxOptions;
    case Op::kCast: return BO::CastOptions;
    case Op::kDequantize: return BO::DequantizeOptions;
    case Op::kMaximum:
    case Op::kMinimum: return BO::MaximumMinimumOptions;
    case Op::kArgMax: return BO::ArgMaxOptions;
    case Op::kLess: return BO::LessOptions;
    case Op::kNeg: return BO::NegOptions;
    case Op::kPadv2: return BO::PadV2Options;
    case Op::kGreater: return BO::GreaterOptions;
    case Op::kGreaterEqual: return BO::GreaterEqualOptions;
    case Op::kLessEqual: return BO::LessEqualOptions;
    case Op::kSelect: return BO::SelectOptions;
    case Op::kSlice: return BO::SliceOptions;
    case Op::kTransposeConv: return BO::TransposeConvOptions;
    case Op::kSparseToDense: return BO::SparseToDenseOptions;
    case Op::kTile: return BO::TileOptions;
    case Op::kExpandDims: return BO::ExpandDimsOptions;
    case Op::kEqual: return BO::EqualOptions;
    case Op::kNotEqual: return BO::NotEqualOptions;
    case Op::kShape: return BO::ShapeOptions;
    case Op::kPow: return BO::PowOptions;
    case Op::kArgMin: return BO::ArgMinOptions;
    case Op::kFakeQuant: return BO::FakeQuantOptions;
    case Op::kPack: return BO::PackOptions;
    case Op::kLogicalOr: return BO::LogicalOrOptions;
    case Op::kOneHot: return BO::OneHotOptions;
    case Op::kLogicalAnd: return BO::LogicalAndOptions;
    case Op::kLogicalNot: return BO::LogicalNotOptions;
    case Op::kUnpack: return BO::UnpackOptions;
    case Op::kFloorDiv: return BO::FloorDivOptions;
    case Op::kSquare: return BO::SquareOptions;
    case Op::kZerosLike: return BO::ZerosLikeOptions;
    case Op::kFill: return BO::FillOptions;
    case Op::kBidirectionalSequenceLstm: return BO::BidirectionalSequenceLSTMOptions;
    case Op::kBidirectionalSequenceRnn: return BO::BidirectionalSequenceRNNOptions;
    case Op::kUnidirectionalSequenceLstm: return BO::UnidirectionalSequenceLSTMOptions;
    case Op::kFloorMod: return BO::FloorModOptions;
    case Op::kRange: return BO::RangeOptions;
    case Op::kResizeNearestNeighbor: return BO::ResizeNearestNeighborOptions;
    case Op::kLeakyRelu: return BO::LeakyReluOptions;
    case Op::kSquaredDifference: return BO::SquaredDifferenceOptions;
    case Op::kMirrorPad: return BO::MirrorPadOptions;
    case Op::kAbs: return BO::AbsOptions;
    case Op::kSplitV: return BO::SplitVOptions;
    case Op::kUnique: return BO::UniqueOptions;
    case Op::kReverseV2: return BO::ReverseV2Options;
    case Op::kAddN: return BO::AddNOptions;
    case Op::kGatherNd: return BO::GatherNdOptions;
    case Op::kCos: return BO::CosOptions;
    case Op::kWhere: return BO::WhereOptions;
    case Op::kRank: return BO::RankOptions;
    case Op::kReverseSequence: return BO::ReverseSequenceOptions;
    case Op::kMatrixDiag: return BO::MatrixDiagOptions;
    case Op::kQuantize: return BO::QuantizeOptions;
    case Op::kMatrixSetDiag: return BO::MatrixSetDiagOptions;
    case Op::kHardSwish: return BO::HardSwishOptions;
    case Op::kIf: return BO::IfOptions;
    case Op::kWhile: return BO::WhileOptions;
    case Op::kDepthToSpace: return BO::DepthToSpaceOptions;
    case Op::kNonMaxSuppressionV4: return BO::NonMaxSuppressionV4Options;
    case Op::kNonMaxSuppressionV5: return BO::NonMaxSuppressionV5Options;
    case Op::kScatterNd: return BO::ScatterNdOptions;
    case Op::kSelectV2: return BO::SelectV2Options;
    case Op::kDensify: return BO::DensifyOptions;
    case Op::kSegmentSum: return BO::SegmentSumOptions;
    case Op::kBatchMatmul: return BO::BatchMatMulOptions;
    case Op::kCumsum: return BO::CumsumOptions;
    case Op::kCallOnce: return BO::CallOnceOptions;
    case Op::kBroadcastTo: return BO::BroadcastToOptions;
    case Op::kRfft2d: return BO::Rfft2dOptions;
    case Op::kConv3d:
    case Op::kConv3dTranspose: return BO::Conv3DOptions;
    case Op::kHashtable: return BO::HashtableOptions;
    case Op::kHashtableFind: return BO::HashtableFindOptions;
    case Op::kHashtableImport: return BO::HashtableImportOptions;
    case Op::kHashtableSize: return BO::HashtableSizeOptions;
    case Op::kVarHandle: return BO::VarHandleOptions;
    case Op::kReadVariable: return BO::ReadVariableOptions;
    case Op::kAssignVariable: return BO::AssignVariableOptions;
    case Op::kRandomStandardNormal:
    case Op::kRandomUniform:
    case Op::kMultinomial: return BO::RandomOptions;
    case Op::kBucketize: return BO::BucketizeOptions;
    case Op::kGelu: return BO::GeluOptions;
    case Op::kDynamicUpdateSlice: return BO::DynamicUpdateSliceOptions;
    case Op::kUnsortedSegmentProd: return BO::UnsortedSegmentProdOptions;
    case Op::kUnsortedSegmentMax: return BO::UnsortedSegmentMaxOptions;
    case Op::kUnsortedSegmentMin: return BO::UnsortedSegmentMinOptions;
    case Op::kUnsortedSegmentSum: return BO::UnsortedSegmentSumOptions;
    case Op::kAtan2: return BO::ATan2Options;
    case Op::kSign: return BO::SignOptions;
    case Op::kBitcast: return BO::BitcastOptions;
    case Op::kBitwiseXor: return BO::BitwiseXorOptions;
    case Op::kRightShift: return BO::RightShiftOptions;
    default: return BO::NONE;
  }
}

bool IsFieldlessOptions(tflite::BuiltinOptions type) {
  switch (type) {
    case BO::PadOptions:
    case BO::PadV2Options:
    case BO::SpaceToBatchNDOptions:
    case BO::BatchToSpaceNDOptions:
    case BO::TopKV2Options:
    case BO::TransposeOptions:
    case BO::ExpOptions:
    case BO::CosOptions:
    case BO::LogSoftmaxOptions:
    case BO::DequantizeOptions:
    case BO::MaximumMinimumOptions:
    case BO::TileOptions:
    case BO::GreaterOptions:
    case BO::GreaterEqualOptions:
    case BO::LessOptions:
    case BO::LessEqualOptions:
    case BO::NegOptions:
    case BO::SelectOptions:
    case BO::SliceOptions:
    case BO::ExpandDimsOptions:
    case BO::EqualOptions:
    case BO::NotEqualOptions:
    case BO::RankOptions:
    case BO::PowOptions:
    case BO::LogicalOrOptions:
    case BO::AbsOptions:
    case BO::HardSwishOptions:
    case BO::LogicalAndOptions:
    case BO::LogicalNotOptions:
    case BO::FloorDivOptions:
    case BO::SquareOptions:
    case BO::ZerosLikeOptions:
    case BO::FillOptions:
    case BO::FloorModOptions:
    case BO::RangeOptions:
    case BO::SquaredDifferenceOptions:
    case BO::ReverseV2Options:
    case BO::AddNOptions:
    case BO::GatherNdOptions:
    case BO::WhereOptions:
    case BO::MatrixDiagOptions:
    case BO::QuantizeOptions:
    case BO::MatrixSetDiagOptions:
    case BO::NonMaxSuppressionV4Options:
    case BO::NonMaxSuppressionV5Options:
    case BO::ScatterNdOptions:
    case BO::SelectV2Options:
    case BO::DensifyOptions:
    case BO::SegmentSumOptions:
    case BO::BroadcastToOptions:
    case BO::Rfft2dOptions:
    case BO::HashtableFindOptions:
    case BO::HashtableImportOptions:
    case BO::HashtableSizeOptions:
    case BO::ReadVariableOptions:
    case BO::AssignVariableOptions:
    case BO::DynamicUpdateSliceOptions:
    case BO::UnsortedSegmentProdOptions:
    case BO::UnsortedSegmentMaxOptions:
    case BO::UnsortedSegmentMinOptions:
    case BO::UnsortedSegmentSumOptions:
    case BO::ATan2Options:
    case BO::SignOptions:
    case BO::BitcastOptions:
    case BO::BitwiseXorOptions:
    case BO::RightShiftOptions:
      return true;
    default:
      return false;
  }
}

}  // namespace delegato::model_internal
