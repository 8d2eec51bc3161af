"""Running notebooks: ``course run``'s executor and the kernels it starts.

- ``runner``: executes notebooks with papermill, each in its own process group
- ``ipc_kernel``: a Jupyter kernel over Unix sockets for machines that refuse internet sockets
"""
