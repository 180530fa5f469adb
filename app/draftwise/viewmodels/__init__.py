"""viewmodels"""
