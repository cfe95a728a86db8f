import gt4py.next as gtx

KDim = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
EdgeDim = gtx.Dimension("Edge")
CellDim = gtx.Dimension("Cell")
VertexDim = gtx.Dimension("Vertex")
E2CDim = gtx.Dimension("E2C", gtx.DimensionKind.LOCAL)
C2E2CODim = gtx.Dimension("C2E2CO", gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=CellDim, target=(EdgeDim, E2CDim))
C2E2CO = gtx.FieldOffset("C2E2CO", source=CellDim, target=(CellDim, C2E2CODim))
Koff = gtx.FieldOffset("Koff", source=KDim, target=(KDim,))

CellKField = gtx.Field[gtx.Dims[CellDim, KDim], gtx.float64]
EdgeKField = gtx.Field[gtx.Dims[EdgeDim, KDim], gtx.float64]
EdgeField = gtx.Field[gtx.Dims[EdgeDim], gtx.float64]
