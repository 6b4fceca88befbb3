"""Serializers of the collector API: one input and one output shape per operation."""

from __future__ import annotations

from rest_framework import serializers

from collector.models import Corpus, Document


class CorpusOutputSerializer(serializers.ModelSerializer):
    documents = serializers.IntegerField(source="documents_count")
    passages = serializers.IntegerField(source="passages_count")
    questions = serializers.IntegerField(source="questions_count")
    queries = serializers.IntegerField(source="queries_count")

    class Meta:
        model = Corpus
        fields = ("name", "language", "description", "split_mode", "window_tokens",
                  "window_overlap", "documents", "passages", "questions", "queries")


class DocumentListOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ("id", "external_id", "title", "url", "source_type")


class SearchInputSerializer(serializers.Serializer):
    q = serializers.CharField(max_length=500, trim_whitespace=True)
    k = serializers.IntegerField(min_value=1, max_value=100, default=10)
    unit = serializers.ChoiceField(choices=("passage", "document"), default="passage")


class PassageHitOutputSerializer(serializers.Serializer):
    passage_id = serializers.IntegerField()
    document_id = serializers.IntegerField()
    document = serializers.CharField(source="external_id")
    title = serializers.CharField()
    ordinal = serializers.IntegerField()
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    score = serializers.FloatField()
    text = serializers.CharField()


class DocumentHitOutputSerializer(serializers.Serializer):
    document_id = serializers.IntegerField()
    document = serializers.CharField(source="external_id")
    title = serializers.CharField()
    score = serializers.FloatField()
    passages = PassageHitOutputSerializer(many=True)


class PassageSearchOutputSerializer(serializers.Serializer):
    corpus = serializers.CharField()
    query = serializers.CharField()
    unit = serializers.ChoiceField(choices=("passage",))
    hits = PassageHitOutputSerializer(many=True)


class DocumentSearchOutputSerializer(serializers.Serializer):
    corpus = serializers.CharField()
    query = serializers.CharField()
    unit = serializers.ChoiceField(choices=("document",))
    hits = DocumentHitOutputSerializer(many=True)
