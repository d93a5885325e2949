# Writes case<N>.json: random flat-network layer tables for the placement golden test
# (tests/data/placement-golden.json; see its comment).
import json, random
random.seed(19)
for c in range(80):
    n = random.randint(1, 10)
    p = {"num_accelerators": random.randint(1, 64), "micro_batch": random.randint(1, 4)}
    p["global_batch"] = p["micro_batch"] * random.randint(1, 40)
    p["link_bandwidth_bytes_per_s"] = round(random.uniform(0.5, 4), 3)
    p["hbm_bytes"] = round(random.uniform(3, 40), 3)
    p["recompute"] = random.random() < 0.5
    widths = {}
    for t in (1, 2, 4):
        if t != 1 and random.random() < 0.33: continue
        layers, edges = [], []
        for i in range(n):
            l = {"name": f"l{i}", "forward_s": round(random.uniform(0.1, 2), 3)/t, "backward_s": round(random.uniform(0.1, 4), 3)/t,
                 "weight_bytes": round(random.uniform(0, 3), 3)/t, "activation_bytes": round(random.uniform(0, 3), 3),
                 "optimizer_state_bytes": round(random.uniform(0, 2), 3), "tensor_parallel": t > 1 and random.random() < 0.75}
            if random.random() < 0.5: l["recompute_forward_s"] = round(random.uniform(0.1, 2), 3)/t
            if random.random() < 0.5: l["gradient_bytes"] = round(random.uniform(0, 3), 3)/t
            layers.append(l)
            if i > 0: edges.append({"from": f"l{i-1}", "to": f"l{i}", "bytes": round(random.uniform(0, 3), 3)})
            if i > 1 and random.random() < 0.2: edges.append({"from": f"l{i-2}", "to": f"l{i}", "bytes": round(random.uniform(0, 3), 3)})
        widths[str(t)] = {"layers": layers, "edges": edges}
    p["widths"] = widths
    json.dump(p, open(f"case{c}.json", "w"))
