"""Reading and writing files safely: atomic writes (``atomic``), bounded reads of files that may
be hostile (``safe_read``) and Parquet tables read without ``pyarrow.dataset`` (``parquet``)."""
