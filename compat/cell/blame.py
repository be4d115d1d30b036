"""Which onnxruntime optimizer makes an optimization level compute other outputs.

When a level disagrees with the oracle while `disabled` agrees, one of the graph
rewrites that level runs is responsible: an intended rewrite that rounds differently
(NchwcTransformer's blocked convolution, a LayerNormalization fused from its parts) or
a bug. onnxruntime leaves out the optimizers named in
`InferenceSession(..., disabled_optimizers=[...])` (a keyword since onnxruntime PR
#7126), graph transformers and rewrite rules alike, and ignores names it does not have.
So the level runs again with every known name disabled and, when the outputs then
agree, with ever smaller chunks of the names enabled again while they still agree, down
to the fewest that must stay disabled (`fewest`: about a dozen sessions for one
optimizer); the sentence names them and says whether the outputs are then identical or
only within the tolerance.

The names are those onnxruntime 1.17-1.32 log for the CPU at level `all` ("Applying
graph transformer ..."; 1.15 and 1.16 log none, and use 1.17's names) and, for the
rewrite rules inside Level1_RuleBasedTransformer and Level2_RuleBasedTransformer, their
`Name()`s from `GenerateRewriteRules` in onnxruntime/core/optimizer/
graph_transformer_utils.cc; one renamed (LayerNormFusion became LayerNormFusionL1 and
LayerNormFusionL2 in 1.20) is listed under every name.
"""

from __future__ import annotations

import re
import time

from compat.cell.compare import compare_outputs, largest_difference
from compat.cell.session import open_session

#: Level -> the optimizers it adds, each known by every name any release gave it: at
#: `basic` the rewrite rules of Level1_RuleBasedTransformer, then its transformers; at
#: `extended` the rules of Level2_RuleBasedTransformer (ClipQuantRewrite,
#: ReluQuantRewrite), then its transformers.
OPTIMIZERS = {
    "basic": [
        "EliminateIdentity",
        "EliminateSlice",
        "UnsqueezeElimination",
        "EliminateDropout",
        "ExpandElimination",
        "CastElimination",
        "CastChainElimination",
        "PreShapeNodeElimination",
        "NoopElimination",
        "DivMulFusion",
        "FuseReluClip",
        "GemmSumFusion",
        "GemmTransposeFusion",
        "NotWhereFusion",
        "ConvAddFusion",
        "ConvMulFusion",
        "ConvBNFusion",
        "Pad_Fusion",
        "MatMul_BatchNormalization_Fusion",
        "LabelEncoderFusion",
        "DoubleQDQPairsRemover",
        "ConstantSharing",
        "CommonSubexpressionElimination",
        "ConstantFolding",
        "MatMulAddFusion",
        "ReshapeFusion",
        "FreeDimensionOverrideTransformer",
        "SliceConcatToSpaceToDepthFusion",
        "GeluFusionL1",
        "LayerNormFusionL1",
        "QDQPropagationTransformer",
        "WeightBiasQuantization",
        "WhereDummyDq",
        "FuseFp16InitializerToFp32NodeTransformer",
        "TransposeOptimizer",
    ],
    "extended": [
        "ClipQuantRewrite",
        "ReluQuantRewrite",
        "TransposeOptimizer_CPUExecutionProvider",
        "QDQS8ToU8Transformer",
        "QDQSelectorActionTransformer",
        "GemmActivationFusion",
        "MatMulIntegerToFloatFusion",
        "DynamicQuantizeMatMulFusion",
        "ConvActivationFusion",
        "GeluFusion",
        "GeluFusionL2",
        "LayerNormFusion",
        "LayerNormFusionL2",
        "SimplifiedLayerNormFusion",
        "AttentionFusion",
        "EmbedLayerNormFusion",
        "GatherToSplitFusion",
        "GatherSliceToSplitFusion",
        "GatherToSliceFusion",
        "MatmulTransposeFusion",
        "BiasGeluFusion",
        "GroupQueryAttentionFusion",
        "GroupQueryAttentionPreNormFusion",
        "SkipLayerNormFusion",
        "BiasSkipLayerNormFusion",
        "FastGeluFusion",
        "QuickGeluFusion",
        "BiasSoftmaxFusion",
        "BiasDropoutFusion",
        "MatMulScaleFusion",
        "MatMulActivationFusion",
        "Avx2WeightS8ToU8Transformer",
        "MatMulNBitsFusion",
        "DQMatMulNBitsFusion",
        "SwiGluFusion",
        "QDQFinalCleanupTransformer",
    ],
    "all": ["NchwcTransformer", "NhwcTransformer", "ConvAddActivationFusion"],
}
LEVELS = ("basic", "extended", "all")
#: Seconds the search may spend on one level: each step builds a session of the model.
BUDGET = 30.0

#: How a detail names the optimizers found; `responsible_in` reads it back.
_FOUND = re.compile(
    r"onnxruntime's optimizers? (\w+(?:, \w+)*(?: and \w+)?) (?:is|are) responsible"
)


def candidates(level):
    """Every optimizer a session at `level` runs: its own and the lower levels'."""
    names = []
    for name in LEVELS[: LEVELS.index(level) + 1]:
        names.extend(OPTIMIZERS[name])
    return names


def responsible_in(detail: str) -> list[str]:
    """The optimizers a result's detail names as responsible, in order (host side)."""
    found = []
    for names in _FOUND.findall(detail or ""):
        found.extend(names.replace(" and ", ", ").split(", "))
    return list(dict.fromkeys(found))


def fewest(names, agrees, deadline):
    """The fewest of `names` whose disabling still makes the outputs agree (`agrees` holds
    for all of them): chunks of them left enabled while it holds, halved in size when
    none can be, down to one name (delta debugging's complement step). One optimizer
    responsible takes about two sessions per halving; each name left is needed."""
    chunks = 2
    while len(names) > 1 and time.monotonic() < deadline:
        size = -(-len(names) // chunks)
        for start in range(0, len(names), size):
            rest = names[:start] + names[start + size :]
            if rest and agrees(rest):
                names = rest
                chunks = max(chunks - 1, 2)
                break
        else:
            if size == 1:
                return names
            chunks = min(len(names), chunks * 2)
    return names if len(names) == 1 or time.monotonic() < deadline else None


def _words(names):
    return names[0] if len(names) == 1 else "%s and %s" % (", ".join(names[:-1]), names[-1])


def blame(case, level, expected, tolerance, oracle):
    """The sentence that says which optimizers make `level` differ from `expected`, said
    alike at every level they do. `tolerance`: (rtol, atol, per-output tolerances);
    `oracle`: whose outputs `expected` holds, in words."""
    rtol, atol, per_output = tolerance

    def outputs(disabled):
        try:
            session = open_session(case, level, disabled=tuple(disabled))
            names = [o.name for o in session.get_outputs()]
            return names, session.run(None, case.inputs)
        except Exception:  # a session without these optimizers fails: no agreement
            return None

    def agrees(disabled):
        got = outputs(disabled)
        return got is not None and compare_outputs(*got, expected, rtol, atol, per_output) is None

    everything = candidates(level)
    if not agrees(everything):
        return (
            "no onnxruntime optimizer is responsible: with all %d it knows disabled, the "
            "outputs still differ (its kernels, not a rewrite)" % len(everything)
        )
    names = fewest(everything, agrees, time.monotonic() + BUDGET)
    if names is None:
        return "the search for the onnxruntime optimizer responsible stopped after %d s" % BUDGET
    got = outputs(names)
    exact = got is not None and largest_difference(*got, expected) is None
    how = "exactly" if exact else "within tolerance"
    if len(names) == 1:
        text = "onnxruntime's optimizer %s is responsible: disabling it alone"
    else:
        text = "onnxruntime's optimizers %s are responsible together: disabling them"
    return (text + " (disabled_optimizers=%r) makes the outputs match %s %s") % (
        _words(names),
        names,
        oracle,
        how,
    ) + ("" if len(names) == 1 else ", disabling fewer does not")
