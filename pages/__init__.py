"""The app's pages (run by ``app.py`` through ``st.navigation``) and their shared helpers."""
