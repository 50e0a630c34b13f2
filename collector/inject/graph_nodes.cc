#include "inject/graph_nodes.h"

#include <dlfcn.h>

#include "decode/cupti_decode.h"

namespace gt::inject {

using counters::GraphNodeInfo;
using counters::GraphNodeKind;
using counters::GraphPlan;
using counters::PlanGraph;

namespace {

// Looked up in libcuda itself, as range_profiler.cc does: the driver is loaded (it calls us) and a link-time
// dependency would tie the injection library to one driver.
struct GraphDriverApi {
  CUresult (*graph_clone)(CUgraph*, CUgraph) = nullptr;
  CUresult (*graph_destroy)(CUgraph) = nullptr;
  CUresult (*graph_get_nodes)(CUgraph, CUgraphNode*, size_t*) = nullptr;
  CUresult (*graph_get_edges)(CUgraph, CUgraphNode*, CUgraphNode*, size_t*) = nullptr;
  CUresult (*node_get_type)(CUgraphNode, CUgraphNodeType*) = nullptr;
  CUresult (*kernel_node_get_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*) = nullptr;
  CUresult (*kernel_node_get_attribute)(CUgraphNode, CUkernelNodeAttrID, CUkernelNodeAttrValue*) = nullptr;
  CUresult (*memcpy_node_get_params)(CUgraphNode, CUDA_MEMCPY3D*) = nullptr;
  CUresult (*memset_node_get_params)(CUgraphNode, CUDA_MEMSET_NODE_PARAMS*) = nullptr;
  CUresult (*child_graph)(CUgraphNode, CUgraph*) = nullptr;
  CUresult (*kernel_get_function)(CUfunction*, CUkernel) = nullptr;
  CUresult (*func_get_name)(const char**, CUfunction) = nullptr;
  CUresult (*func_get_attribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
  CUresult (*launch_kernel_ex)(const CUlaunchConfig*, CUfunction, void**, void**) = nullptr;
  CUresult (*memcpy3d_async)(const CUDA_MEMCPY3D*, CUstream) = nullptr;
  CUresult (*memset8)(CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream) = nullptr;
  CUresult (*memset16)(CUdeviceptr, size_t, unsigned short, size_t, size_t, CUstream) = nullptr;
  CUresult (*memset32)(CUdeviceptr, size_t, unsigned int, size_t, size_t, CUstream) = nullptr;
  // One row: the node's pitch is then unused and may be 0, which the 2D calls reject.
  CUresult (*memset8_1d)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*memset16_1d)(CUdeviceptr, unsigned short, size_t, CUstream) = nullptr;
  CUresult (*memset32_1d)(CUdeviceptr, unsigned int, size_t, CUstream) = nullptr;
};

const GraphDriverApi& Api() {
  static GraphDriverApi api = [] {
    GraphDriverApi a;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(lib ? dlsym(lib, name)
                                                                       : dlsym(RTLD_DEFAULT, name));
    };
    get(a.graph_clone, "cuGraphClone");
    get(a.graph_destroy, "cuGraphDestroy");
    get(a.graph_get_nodes, "cuGraphGetNodes");
    get(a.graph_get_edges, "cuGraphGetEdges");  // v1: fails (LOSSY_QUERY) on edges with data: not replayed
    get(a.node_get_type, "cuGraphNodeGetType");
    get(a.kernel_node_get_params, "cuGraphKernelNodeGetParams_v2");
    get(a.kernel_node_get_attribute, "cuGraphKernelNodeGetAttribute");
    get(a.memcpy_node_get_params, "cuGraphMemcpyNodeGetParams");
    get(a.memset_node_get_params, "cuGraphMemsetNodeGetParams");
    get(a.child_graph, "cuGraphChildGraphNodeGetGraph");
    get(a.kernel_get_function, "cuKernelGetFunction");
    get(a.func_get_name, "cuFuncGetName");
    get(a.func_get_attribute, "cuFuncGetAttribute");
    get(a.launch_kernel_ex, "cuLaunchKernelEx");
    get(a.memcpy3d_async, "cuMemcpy3DAsync_v2");
    get(a.memset8, "cuMemsetD2D8Async");
    get(a.memset16, "cuMemsetD2D16Async");
    get(a.memset32, "cuMemsetD2D32Async");
    get(a.memset8_1d, "cuMemsetD8Async");
    get(a.memset16_1d, "cuMemsetD16Async");
    get(a.memset32_1d, "cuMemsetD32Async");
    return a;
  }();
  return api;
}

const char* NodeTypeName(CUgraphNodeType type) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_HOST:
      return "host node";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
      return "external semaphore signal node";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
      return "external semaphore wait node";
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
      return "memory allocation node";
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
      return "memory free node";
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
      return "batch memory operation node";
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
      return "conditional node";
    default:
      return "node of an unknown type";
  }
}

// Appends `graph`'s nodes to `out` (child graphs inlined between an entry and an exit no-op node) and returns
// the indices of its entry and exit, so a parent's edges can attach to them. "" or the reason it failed.
std::string Flatten(CUgraph graph, GraphExec& out, std::vector<std::pair<uint32_t, uint32_t>>& edges,
                    uint32_t* entry, uint32_t* exit, int depth) {
  const GraphDriverApi& d = Api();
  if (depth > 8) return "child graphs nest too deep";
  size_t count = 0;
  if (d.graph_get_nodes(graph, nullptr, &count) != CUDA_SUCCESS) return "cuGraphGetNodes failed";
  std::vector<CUgraphNode> nodes(count);
  if (count && d.graph_get_nodes(graph, nodes.data(), &count) != CUDA_SUCCESS)
    return "cuGraphGetNodes failed";
  auto add = [&](GraphNodeLaunch n) {
    out.nodes.push_back(std::move(n));
    return static_cast<uint32_t>(out.nodes.size() - 1);
  };
  *entry = add({});
  std::map<CUgraphNode, std::pair<uint32_t, uint32_t>> index;  // node -> its (entry, exit) in `out`
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type{};
    if (d.node_get_type(node, &type) != CUDA_SUCCESS) return "cuGraphNodeGetType failed";
    GraphNodeLaunch n;
    switch (type) {
      case CU_GRAPH_NODE_TYPE_KERNEL: {
        CUDA_KERNEL_NODE_PARAMS p{};
        if (d.kernel_node_get_params(node, &p) != CUDA_SUCCESS) return "cuGraphKernelNodeGetParams failed";
        n.function = p.func;
        if (!n.function && p.kern && d.kernel_get_function) d.kernel_get_function(&n.function, p.kern);
        const char* mangled = nullptr;
        if (!n.function || !d.func_get_name || d.func_get_name(&mangled, n.function) != CUDA_SUCCESS ||
            !mangled)
          return "a kernel node's function has no name";
        n.info.kind = GraphNodeKind::kKernel;
        n.info.kernel_name = decode::Demangle(mangled);
        n.grid[0] = p.gridDimX, n.grid[1] = p.gridDimY, n.grid[2] = p.gridDimZ;
        n.block[0] = p.blockDimX, n.block[1] = p.blockDimY, n.block[2] = p.blockDimZ;
        n.dynamic_smem = p.sharedMemBytes;
        n.kernel_params = p.kernelParams;
        n.extra = p.extra;
        CUkernelNodeAttrValue v{};
        if (d.kernel_node_get_attribute &&
            d.kernel_node_get_attribute(node, CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION, &v) == CUDA_SUCCESS)
          n.cluster[0] = v.clusterDim.x, n.cluster[1] = v.clusterDim.y, n.cluster[2] = v.clusterDim.z;
        v = {};
        if (d.kernel_node_get_attribute &&
            d.kernel_node_get_attribute(node, CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, &v) == CUDA_SUCCESS)
          n.cooperative = v.cooperative != 0;
        if (d.func_get_attribute) {
          d.func_get_attribute(&n.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, n.function);
          d.func_get_attribute(&n.static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, n.function);
        }
        break;
      }
      case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (d.memcpy_node_get_params(node, &n.memcpy) != CUDA_SUCCESS)
          return "cuGraphMemcpyNodeGetParams failed";
        n.info.kind = GraphNodeKind::kMemcpy;
        break;
      case CU_GRAPH_NODE_TYPE_MEMSET:
        if (d.memset_node_get_params(node, &n.memset) != CUDA_SUCCESS)
          return "cuGraphMemsetNodeGetParams failed";
        n.info.kind = GraphNodeKind::kMemset;
        break;
      case CU_GRAPH_NODE_TYPE_EMPTY:
      case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        // Run serially on one stream, what these order is already in order; the app's own graph launch
        // records its events.
        n.info.kind = GraphNodeKind::kNoOp;
        break;
      case CU_GRAPH_NODE_TYPE_GRAPH: {
        CUgraph child = nullptr;
        if (d.child_graph(node, &child) != CUDA_SUCCESS) return "cuGraphChildGraphNodeGetGraph failed";
        uint32_t child_entry = 0, child_exit = 0;
        std::string error = Flatten(child, out, edges, &child_entry, &child_exit, depth + 1);
        if (!error.empty()) return error;
        index[node] = {child_entry, child_exit};
        continue;
      }
      default:
        n.info.kind = GraphNodeKind::kUnsupported;
        n.info.unsupported = NodeTypeName(type);
        break;
    }
    uint32_t i = add(std::move(n));
    index[node] = {i, i};
  }
  *exit = add({});
  for (const auto& [node, ends] : index) {
    edges.push_back({*entry, ends.first});
    edges.push_back({ends.second, *exit});
  }
  size_t edge_count = 0;
  if (d.graph_get_edges(graph, nullptr, nullptr, &edge_count) != CUDA_SUCCESS)
    return "the graph's edges cannot be read (edges with data, e.g. programmatic dependent launch)";
  std::vector<CUgraphNode> from(edge_count), to(edge_count);
  if (edge_count && d.graph_get_edges(graph, from.data(), to.data(), &edge_count) != CUDA_SUCCESS)
    return "cuGraphGetEdges failed";
  for (size_t e = 0; e < edge_count; ++e) {
    auto f = index.find(from[e]), t = index.find(to[e]);
    if (f == index.end() || t == index.end()) return "an edge names a node the graph does not list";
    edges.push_back({f->second.second, t->second.first});
  }
  return "";
}

}  // namespace

GraphCatalog::~GraphCatalog() {
  for (auto& [exec, g] : execs_)
    if (g->clone && Api().graph_destroy) Api().graph_destroy(g->clone);
}

void GraphCatalog::Read(CUgraphExec exec, CUgraph graph) {
  Forget(exec);
  auto g = std::make_unique<GraphExec>();
  const GraphDriverApi& d = Api();
  std::string error;
  if (!d.graph_clone || !d.graph_get_nodes || !d.graph_get_edges || !d.node_get_type ||
      !d.kernel_node_get_params || !d.memcpy_node_get_params || !d.memset_node_get_params || !d.child_graph ||
      !d.launch_kernel_ex || !d.graph_destroy)
    error = "this driver lacks the graph entry points gtrace needs";
  // The app may destroy or change its graph after instantiation; the executable graph keeps what it had, so
  // keep a copy of that.
  else if (d.graph_clone(&g->clone, graph) != CUDA_SUCCESS)
    error = "cuGraphClone failed";
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  if (error.empty()) {
    uint32_t entry = 0, exit = 0;
    error = Flatten(g->clone, *g, edges, &entry, &exit, 0);
  }
  if (!error.empty()) {
    g->nodes.clear();
    g->plan = GraphPlan{};
    g->plan.not_replayable = error;
  } else {
    std::vector<GraphNodeInfo> infos;
    infos.reserve(g->nodes.size());
    for (const auto& n : g->nodes) infos.push_back(n.info);
    g->plan = PlanGraph(infos, edges);
  }
  execs_[exec] = std::move(g);
}

void GraphCatalog::MarkStale(CUgraphExec exec, const std::string& why) {
  if (auto it = execs_.find(exec); it != execs_.end() && it->second->stale.empty()) it->second->stale = why;
}

void GraphCatalog::Forget(CUgraphExec exec) {
  auto it = execs_.find(exec);
  if (it == execs_.end()) return;
  if (it->second->clone && Api().graph_destroy) Api().graph_destroy(it->second->clone);
  execs_.erase(it);
}

const GraphExec* GraphCatalog::Find(CUgraphExec exec) const {
  auto it = execs_.find(exec);
  return it == execs_.end() ? nullptr : it->second.get();
}

CUlaunchConfig KernelLaunchConfig(const GraphNodeLaunch& n, CUstream stream, CUlaunchAttribute* attrs) {
  CUlaunchConfig c{};
  c.gridDimX = n.grid[0], c.gridDimY = n.grid[1], c.gridDimZ = n.grid[2];
  c.blockDimX = n.block[0], c.blockDimY = n.block[1], c.blockDimZ = n.block[2];
  c.sharedMemBytes = n.dynamic_smem;
  c.hStream = stream;
  c.attrs = attrs;
  c.numAttrs = 0;
  if (n.cluster[0]) {
    CUlaunchAttribute& a = attrs[c.numAttrs++];
    a = {};
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = n.cluster[0], a.value.clusterDim.y = n.cluster[1],
    a.value.clusterDim.z = n.cluster[2];
  }
  if (n.cooperative) {
    CUlaunchAttribute& a = attrs[c.numAttrs++];
    a = {};
    a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    a.value.cooperative = 1;
  }
  return c;
}

CUresult IssueNode(const GraphNodeLaunch& n, CUstream stream) {
  const GraphDriverApi& d = Api();
  switch (n.info.kind) {
    case GraphNodeKind::kKernel: {
      CUlaunchAttribute attrs[2];
      CUlaunchConfig config = KernelLaunchConfig(n, stream, attrs);
      return d.launch_kernel_ex(&config, n.function, n.kernel_params, n.extra);
    }
    case GraphNodeKind::kMemcpy:
      return d.memcpy3d_async ? d.memcpy3d_async(&n.memcpy, stream) : CUDA_ERROR_NOT_FOUND;
    case GraphNodeKind::kMemset: {
      const auto& m = n.memset;
      const bool row = m.height <= 1;
      CUresult missing = CUDA_ERROR_NOT_FOUND;
      switch (m.elementSize) {
        case 1: {
          auto v = static_cast<unsigned char>(m.value);
          if (row) return d.memset8_1d ? d.memset8_1d(m.dst, v, m.width, stream) : missing;
          return d.memset8 ? d.memset8(m.dst, m.pitch, v, m.width, m.height, stream) : missing;
        }
        case 2: {
          auto v = static_cast<unsigned short>(m.value);
          if (row) return d.memset16_1d ? d.memset16_1d(m.dst, v, m.width, stream) : missing;
          return d.memset16 ? d.memset16(m.dst, m.pitch, v, m.width, m.height, stream) : missing;
        }
        case 4:
          if (row) return d.memset32_1d ? d.memset32_1d(m.dst, m.value, m.width, stream) : missing;
          return d.memset32 ? d.memset32(m.dst, m.pitch, m.value, m.width, m.height, stream) : missing;
        default:
          return CUDA_ERROR_INVALID_VALUE;
      }
    }
    case GraphNodeKind::kNoOp:
      return CUDA_SUCCESS;
    case GraphNodeKind::kUnsupported:
      return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // namespace gt::inject
