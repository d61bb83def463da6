"""Extract ARX's adult utility-metric cases (TestUtilityMetrics.java) that qar's models and metrics cover."""

import json
import re
import sys

src = open(sys.argv[1]).read()
cases = []
METRIC = {
    "Metric.createAECSMetric()": ("aecs", None),
    "Metric.createDiscernabilityMetric(false)": ("discernibility", None),
    "Metric.createEntropyMetric(false)": ("entropy_nm", None),
    "Metric.createEntropyMetric(true)": ("entropy", None),
    "Metric.createEntropyMetric()": ("entropy_nm", None),
    "Metric.createPrecisionMetric(false)": ("precision", None),
    "Metric.createLossMetric(AggregateFunction.RANK)": ("loss_rank", None),
}
for line in src.splitlines():
    if "ARXUtilityMetricsTestCase(" not in line or "adult.csv" not in line or "DPresence" in line:
        continue
    m = re.search(r"ARXConfiguration\.create\(([\d.]+)d, (Metric\.[A-Za-z]+\([^)]*\))\)", line)
    if not m or m.group(2) not in METRIC:
        continue
    limit, metric = float(m.group(1)), METRIC[m.group(2)][0]
    models = []
    for k in re.findall(r"new KAnonymity\((\d+)\)", line):
        models.append(["k", int(k)])
    for t in re.findall(r"new HierarchicalDistanceTCloseness\(\"occupation\", ([\d.]+)", line):
        models.append(["t_hier", float(t)])
    for t in re.findall(r"new EqualDistanceTCloseness\(\"occupation\", ([\d.]+)", line):
        models.append(["t_equal", float(t)])
    for c, ell in re.findall(r"new RecursiveCLDiversity\(\"occupation\", ([\d.]+), (\d+)\)", line):
        models.append(["l_recursive", float(c), int(ell)])
    for ell in re.findall(r"new DistinctLDiversity\(\"occupation\", (\d+)\)", line):
        models.append(["l_distinct", int(ell)])
    for ell in re.findall(r"new EntropyLDiversity\(\"occupation\", ([\d.]+)\)", line):
        models.append(["l_entropy", float(ell)])
    n_models = line.count("addPrivacyModel(")
    if len(models) != n_models:
        continue
    tail = line.split('"./data/adult.csv",', 1)[1]
    strings = re.findall(r'"([^"]*)"', tail)
    pairs = [(json.loads(strings[i]), strings[i + 1]) for i in range(0, len(strings) - 1, 2)]
    cases.append({"limit": limit, "metric": metric, "models": models, "nodes": pairs})
print(json.dumps(cases))
